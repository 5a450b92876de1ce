//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// storedSnapshot is a snapshot object of the shoot's backup entry: <prefix>/v2/<Kind>-<start>-<end>-<time>[.gz][.final].
type storedSnapshot struct {
	Key  string
	Kind string // Full or Incr
	End  int64
}

// storedSnapshots lists the snapshots the store holds for the shoot's BackupEntry.
func storedSnapshots(ctx context.Context, env *seedworkflow.Env) []storedSnapshot {
	objects, err := seedworkflow.ListBackups(ctx, env)
	Expect(err).NotTo(HaveOccurred())
	var snaps []storedSnapshot
	for _, o := range objects {
		if !strings.HasPrefix(o.Key, env.BackupEntryName+"/") {
			continue
		}
		parts := strings.SplitN(path.Base(o.Key), "-", 4)
		if len(parts) != 4 || (parts[0] != "Full" && parts[0] != "Incr") {
			continue
		}
		end, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			continue
		}
		snaps = append(snaps, storedSnapshot{Key: o.Key, Kind: parts[0], End: end})
	}
	return snaps
}

// storedRevision is the highest revision a snapshot in the store holds (0 without one).
func storedRevision(ctx context.Context, env *seedworkflow.Env) int64 {
	var highest int64
	for _, s := range storedSnapshots(ctx, env) {
		highest = max(highest, s.End)
	}
	return highest
}

// sidecarImages are the images of the backup-restore containers of etcd-main's member pods.
func sidecarImages(ctx context.Context, env *seedworkflow.Env) []string {
	var images []string
	for _, p := range memberPods(ctx, env) {
		for _, c := range p.Spec.Containers {
			if c.Name == "backup-restore" {
				images = append(images, c.Image)
			}
		}
	}
	Expect(images).NotTo(BeEmpty(), "no backup-restore container")
	return images
}

// restoreByUpstreamProcedure loses the data of every member of etcd-main and restores it from the backup by
// the steps of upstream etcd-druid's "Recovery from Quorum Loss" (docs/usage/recovering-etcd-clusters.md,
// v0.38.1), which work with either druid: loseAllDataAndStartFirstMember, then wait until that member —
// restored from the backup by its sidecar — is ready, lift the suspension and have druid reconcile, which
// brings the other members back as new members of the restored cluster.
func restoreByUpstreamProcedure(ctx context.Context, env *seedworkflow.Env) {
	obj := loseAllDataAndStartFirstMember(ctx, env)
	By("07: waiting until the first member is restored and ready")
	Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: druidv1alpha1.PodName(obj, 0)}, pod)).To(Succeed())
		g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
		for _, cs := range pod.Status.ContainerStatuses {
			g.Expect(cs.Ready).To(BeTrue(), "container %s of %s", cs.Name, pod.Name)
		}
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())

	By("08: lifting the suspension; druid reconciles the other members back")
	obj = getEtcd(ctx, env, etcd.RoleMain)
	annotate(ctx, env, obj, map[string]*string{
		druidv1alpha1.SuspendEtcdSpecReconcileAnnotation:       nil,
		druidv1alpha1.DisableEtcdComponentProtectionAnnotation: nil,
		"gardener.cloud/operation":                             ptr.To("reconcile"),
	})
	expectReadyWithPeerTLS(ctx, env, int(obj.Spec.Replicas))
}

// loseAllDataAndStartFirstMember runs steps 01 to 06 of upstream's procedure: suspend the spec reconcile
// and the component protection, scale the StatefulSet to 0, delete every PVC (the data loss) and every
// member lease, cut the ConfigMap's initial-cluster and URL maps down to the first member and scale to 1.
// It returns the Etcd.
func loseAllDataAndStartFirstMember(ctx context.Context, env *seedworkflow.Env) *druidv1alpha1.Etcd {
	obj := getEtcd(ctx, env, etcd.RoleMain)
	replicas := int(obj.Spec.Replicas)
	By("01: suspending the spec reconcile and the component protection")
	annotate(ctx, env, obj, map[string]*string{
		druidv1alpha1.SuspendEtcdSpecReconcileAnnotation:       ptr.To(""),
		druidv1alpha1.DisableEtcdComponentProtectionAnnotation: ptr.To(""),
	})

	By("02: scaling the StatefulSet to 0")
	sts := &appsv1.StatefulSet{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.Name}, sts)).To(Succeed())
	scaleStatefulSet(ctx, env, sts, 0)

	By("03: deleting every PVC of the cluster")
	for i := range replicas {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace,
			Name: fmt.Sprintf("%s-%s-%d", sts.Spec.VolumeClaimTemplates[0].Name, sts.Name, i)}}
		Expect(env.Client.Delete(ctx, pvc)).To(Succeed())
	}
	Eventually(func(g Gomega) {
		list := &corev1.PersistentVolumeClaimList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty(), "PVCs still there")
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())

	By("04: deleting every member lease")
	for i := range replicas {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: druidv1alpha1.MemberLeaseName(obj, i)}}
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, lease))).To(Succeed())
	}

	By("05: cutting the ConfigMap down to the first member")
	cutConfigToFirstMember(ctx, env, sts, druidv1alpha1.PodName(obj, 0))

	By("06: scaling the StatefulSet to 1")
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
	scaleStatefulSet(ctx, env, sts, 1)
	return obj
}

// expectReadyWithPeerTLS waits until druid reports the members of etcd-main ready and the Etcd Ready, and the
// cluster's member list has them all, each with https peer URLs only. Peer TLS is read from etcd itself, not
// from status.peerUrlTLSEnabled, which upstream druid v0.38.1 never sets.
func expectReadyWithPeerTLS(ctx context.Context, env *seedworkflow.Env, members int) {
	Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, members, false)).To(Succeed())
	expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
	Eventually(func(g Gomega) {
		cli, err := seedworkflow.EtcdClient(ctx, env, etcd.RoleMain)
		g.Expect(err).NotTo(HaveOccurred())
		defer cli.Close()
		resp, err := cli.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		list := resp.Members
		g.Expect(list).To(HaveLen(members))
		for _, m := range list {
			g.Expect(m.IsLearner).To(BeFalse(), "member %s is still a learner", m.Name)
			g.Expect(m.PeerURLs).To(HaveEach(HavePrefix("https://")), "peer URLs of %s", m.Name)
		}
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}

// annotate sets (non-nil) and removes (nil) annotations of the Etcd.
func annotate(ctx context.Context, env *seedworkflow.Env, obj *druidv1alpha1.Etcd, annotations map[string]*string) {
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	for k, v := range annotations {
		if v == nil {
			delete(obj.Annotations, k)
		} else {
			obj.Annotations[k] = *v
		}
	}
	Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())
}

// scaleStatefulSet sets the StatefulSet's replicas and waits until it runs that many pods, all ready.
func scaleStatefulSet(ctx context.Context, env *seedworkflow.Env, sts *appsv1.StatefulSet, replicas int32) {
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Replicas = ptr.To(replicas)
	Expect(env.Client.Patch(ctx, sts, patch)).To(Succeed())
	if replicas > 0 {
		return
	}
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(env.Client.List(ctx, pods, client.InNamespace(env.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty(), "member pods still running")
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}

// configVolume is the StatefulSet volume of the etcd configuration ConfigMap (both druids name it so).
const configVolume = "etcd-config-file"

// configKey is the ConfigMap's data key of the etcd configuration.
const configKey = "etcd.conf.yaml"

// cutConfigToFirstMember edits the etcd configuration in the ConfigMap the StatefulSet mounts: initial-cluster,
// initial-advertise-peer-urls and advertise-client-urls keep only member (step 05 of upstream's procedure).
func cutConfigToFirstMember(ctx context.Context, env *seedworkflow.Env, sts *appsv1.StatefulSet, member string) {
	var name string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == configVolume && v.ConfigMap != nil {
			name = v.ConfigMap.Name
		}
	}
	Expect(name).NotTo(BeEmpty(), "the StatefulSet mounts no volume %s", configVolume)
	cm := &corev1.ConfigMap{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, cm)).To(Succeed())
	config := map[string]any{}
	Expect(yaml.Unmarshal([]byte(cm.Data[configKey]), &config)).To(Succeed())
	var kept []string
	for _, entry := range strings.Split(fmt.Sprint(config["initial-cluster"]), ",") {
		if strings.HasPrefix(entry, member+"=") {
			kept = append(kept, entry)
		}
	}
	Expect(kept).NotTo(BeEmpty(), "initial-cluster %v names no %s", config["initial-cluster"], member)
	config["initial-cluster"] = strings.Join(kept, ",")
	for _, key := range []string{"initial-advertise-peer-urls", "advertise-client-urls"} {
		urls, ok := config[key].(map[string]any)
		Expect(ok).To(BeTrue(), "%s is not a map by member: %v", key, config[key])
		Expect(urls).To(HaveKey(member))
		config[key] = map[string]any{member: urls[member]}
	}
	data, err := yaml.Marshal(config)
	Expect(err).NotTo(HaveOccurred())
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data[configKey] = string(data)
	Expect(env.Client.Patch(ctx, cm, patch)).To(Succeed(), "editing ConfigMap %s", name)
}
