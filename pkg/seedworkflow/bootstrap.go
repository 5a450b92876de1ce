package seedworkflow

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
)

// BootstrapDruid installs the druid CRDs and etcd-druid from its chart, with the images the seed's registry
// holds (by digest), and waits until the Deployment is available, i.e. its pods run and serve the webhooks.
func BootstrapDruid(ctx context.Context, env *Env) (string, error) {
	return BootstrapDruidWith(ctx, env, func(*druid.Values) {})
}

// BootstrapDruidWith is BootstrapDruid with the values changed by adjust (e.g. another backup-restore image);
// BootstrapDruid again brings druid back to the project's images.
func BootstrapDruidWith(ctx context.Context, env *Env, adjust func(*druid.Values)) (string, error) {
	if err := ensurePriorityClass(ctx, env); err != nil {
		return "", err
	}
	images := env.Seed.Images()
	values := druid.Values{WaitTimeout: env.Timeout, WaitInterval: env.Interval,
		Image: images["etcd-druid"], EtcdWrapperImage: images["etcd-wrapper"], BackupRestoreImage: images["etcdbrctl"]}
	adjust(&values)
	component := druid.New(env.Client, GardenNamespace, values)
	if err := component.Deploy(ctx); err != nil {
		return "", err
	}
	if err := component.Wait(ctx); err != nil {
		return "", err
	}
	return podSummary(ctx, env, GardenNamespace, "app.kubernetes.io/name="+druid.Name)
}

// ensurePriorityClass creates the priority class etcd pods ask for; Gardener creates it in every seed, and
// the apiserver rejects pods of an unknown class.
func ensurePriorityClass(ctx context.Context, env *Env) error {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: PriorityClassName}, Value: 999998500,
		Description: "Gardener's control-plane components of shoots (etcd)"}
	if err := env.Client.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating priority class %s: %w", PriorityClassName, err)
	}
	return nil
}

// podSummary describes the pods of a selector as "name on node (ip)".
func podSummary(ctx context.Context, env *Env, namespace, selector string) (string, error) {
	pods := &corev1.PodList{}
	sel, err := labels.Parse(selector)
	if err != nil {
		return "", err
	}
	if err := env.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("listing pods in %s: %w", namespace, err)
	}
	out := ""
	for _, p := range pods.Items {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("pod %s on %s (%s)", p.Name, p.Spec.NodeName, p.Status.PodIP)
	}
	return out, nil
}
