package seedworkflow

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
)

// BackupObject is one object in a bucket.
type BackupObject struct {
	Key  string
	Size int64
}

// ListBackups lists the objects of the shoot's bucket on the seed's S3 server.
func ListBackups(ctx context.Context, env *Env) ([]BackupObject, error) {
	return ListBucket(ctx, env, env.Bucket())
}

// ListBucket lists the objects of a bucket on the seed's S3 server.
func ListBucket(ctx context.Context, env *Env, bucket string) ([]BackupObject, error) {
	s3 := env.Seed.S3()
	c := awss3.New(awss3.Options{
		Region:                     s3.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(s3.AccessKey, s3.SecretKey, ""),
		BaseEndpoint:               aws.String(s3.Endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	var objects []BackupObject
	pages := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing bucket %s: %w", bucket, err)
		}
		for _, o := range page.Contents {
			objects = append(objects, BackupObject{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	return objects, nil
}

// PrintSummary prints the steps with their durations, the Etcds' conditions and members, the backup objects
// and how to reach the seed.
func PrintSummary(ctx context.Context, out io.Writer, env *Env, steps []StepResult) {
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Summary")
	fmt.Fprintln(out, "=======")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	var total time.Duration
	for _, s := range steps {
		fmt.Fprintf(w, "  %s\t%s\n", s.Name, s.Duration.Round(100*time.Millisecond))
		total += s.Duration
	}
	fmt.Fprintf(w, "  total\t%s\n", total.Round(100*time.Millisecond))
	_ = w.Flush()

	printNodes(ctx, out, env)
	printImages(ctx, out, env)
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		obj, err := Component(env, role).Get(ctx)
		if err != nil {
			fmt.Fprintf(out, "\n%s: %v\n", etcd.Name(role), err)
			continue
		}
		printEtcd(out, env.Namespace, obj, containerRestarts(ctx, env, role))
	}

	fmt.Fprintf(out, "\nBackups in bucket %s (%s):\n", env.Bucket(), env.Seed.S3().Endpoint)
	if objects, err := ListBackups(ctx, env); err != nil {
		fmt.Fprintf(out, "  %v\n", err)
	} else {
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, o := range objects {
			fmt.Fprintf(w, "  %s\t%d bytes\n", o.Key, o.Size)
		}
		_ = w.Flush()
		if len(objects) == 0 {
			fmt.Fprintln(out, "  (none)")
		}
	}

	kubeconfig := env.Seed.Kubeconfig()
	fmt.Fprintf(out, "\nThe seed:\n  export KUBECONFIG=%s\n", kubeconfig)
	fmt.Fprintf(out, "  kubectl get etcd,pods,pvc -n %s\n", env.Namespace)
	fmt.Fprintf(out, "  kubectl get backupbucket,backupentry\n")
	fmt.Fprintf(out, "  gardener-etcd --kubeconfig %s shoot snapshot -n %s   (from inside the seed network)\n", kubeconfig, env.Namespace)
	fmt.Fprintf(out, "  node and container logs: %s/nodes/<node>/{logs,pod-logs}/\n", env.Seed.StateDir())
}

// printNodes is `kubectl get nodes -o wide` in short: which kubelet and container runtime each node runs.
func printNodes(ctx context.Context, out io.Writer, env *Env) {
	nodes := &corev1.NodeList{}
	if err := env.Client.List(ctx, nodes); err != nil {
		fmt.Fprintf(out, "\nNodes: %v\n", err)
		return
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  NODE\tSTATUS\tZONE\tINTERNAL-IP\tKUBELET\tCONTAINER-RUNTIME")
	for _, n := range nodes.Items {
		status, ip := "NotReady", ""
		if localseed.NodeReady(&n) {
			status = "Ready"
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", n.Name, status, n.Labels["topology.kubernetes.io/zone"], ip,
			n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.ContainerRuntimeVersion)
	}
	_ = w.Flush()
}

// printImages lists the images the etcd and druid pods run, by the digest the nodes pulled.
func printImages(ctx context.Context, out io.Writer, env *Env) {
	images := map[string]bool{}
	for _, ns := range []string{env.Namespace, GardenNamespace} {
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			continue
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.ContainerStatuses {
				images[c.ImageID] = true
			}
		}
	}
	if len(images) == 0 {
		return
	}
	fmt.Fprintln(out, "\nImages the pods run:")
	for _, image := range slices.Sorted(maps.Keys(images)) {
		fmt.Fprintf(out, "  %s\n", image)
	}
}

// containerRestarts are the restarts of each member pod's containers ("etcd 1, backup-restore 0"): the
// peer-TLS switch restarts etcd in place.
func containerRestarts(ctx context.Context, env *Env, role string) map[string]string {
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(env.Namespace), memberSelector(role)); err != nil {
		return nil
	}
	restarts := map[string]string{}
	for _, p := range pods.Items {
		var parts []string
		for _, c := range p.Status.ContainerStatuses {
			parts = append(parts, fmt.Sprintf("%s %d", c.Name, c.RestartCount))
		}
		restarts[p.Name] = strings.Join(parts, ", ")
	}
	return restarts
}

func printEtcd(out io.Writer, namespace string, obj *druidv1alpha1.Etcd, restarts map[string]string) {
	ready := "unknown"
	if obj.Status.Ready != nil {
		ready = fmt.Sprint(*obj.Status.Ready)
	}
	fmt.Fprintf(out, "\nEtcd %s/%s: replicas %d, ready %d, ready=%s", namespace, obj.Name, obj.Spec.Replicas, obj.Status.ReadyReplicas, ready)
	if obj.Status.PeerUrlTLSEnabled != nil {
		fmt.Fprintf(out, ", peer TLS %v", *obj.Status.PeerUrlTLSEnabled)
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  CONDITION\tSTATUS\tREASON\tMESSAGE")
	for _, c := range obj.Status.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message, 80))
	}
	fmt.Fprintln(w, "  MEMBER\tSTATUS\tROLE\tID\tCONTAINER RESTARTS")
	for _, m := range obj.Status.Members {
		role := "-"
		if m.Role != nil {
			role = string(*m.Role)
		}
		id := "-"
		if m.ID != nil {
			id = *m.ID
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", m.Name, m.Status, role, id, restarts[m.Name])
	}
	_ = w.Flush()
}

// oneLine shortens s to maxRunes runes on one line.
func oneLine(s string, maxRunes int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxRunes {
		return string(r[:maxRunes-1]) + "…"
	}
	return s
}
