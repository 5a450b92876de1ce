package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// A StatefulSet written before the Local container check mounts the node directory its container named
// (here /var/lib/kubelet). Druid reports it on the Etcd — LocalStoreMountsAllowed=False and a Warning
// event naming the path — and leaves the StatefulSet in place while the store still breaks the rules;
// once the store is fixed, the sync replaces the mount and the condition turns True.
func TestStatefulSetMountingOutsideTheAllowedDirectoriesIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--a/etcd-main", Container: ptr.To("bkp"), Provider: ptr.To(druidv1alpha1.StorageProviderLocal)}
	})
	waitReconciled(t, ns)

	// What a druid before the check wrote for container ../../../var/lib/kubelet, and that container in
	// the Etcd (stored before the webhook refused it).
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		for i, v := range sts.Spec.Template.Spec.Volumes {
			if v.HostPath != nil {
				sts.Spec.Template.Spec.Volumes[i].HostPath.Path = "/var/lib/kubelet"
			}
		}
		for i := range sts.Spec.Template.Spec.Containers {
			for j := range sts.Spec.Template.Spec.Containers[i].VolumeMounts {
				sts.Spec.Template.Spec.Containers[i].VolumeMounts[j].SubPath = ""
			}
		}
		g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	updateEtcd(t, ns, withContainerAndReconcile("../../../var/lib/kubelet"))

	etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeLocalStoreMountsAllowed, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonMountOutsideAllowedDirectories)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeLocalStoreMountsAllowed).Message).
		To(ContainSubstring("volume local-backup mounts the node directory /var/lib/kubelet"))
	g.Eventually(func(g Gomega) []corev1.Event {
		return warningEvents(g, ns, etcdcontroller.EventReasonLocalStoreMountOutsideAllowed)
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(HaveField("Message", ContainSubstring("/var/lib/kubelet"))))
	g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).To(Succeed(), "the StatefulSet is left in place")

	updateEtcd(t, ns, withContainerAndReconcile("bkp"))
	expectCondition(t, ns, etcdcontroller.ConditionTypeLocalStoreMountsAllowed, druidv1alpha1.ConditionTrue, etcdcontroller.ReasonMountsAllowed)
	g.Eventually(func(g Gomega) []string {
		var paths []string
		for _, v := range statefulSet(g, ns).Spec.Template.Spec.Volumes {
			if v.HostPath != nil {
				paths = append(paths, v.HostPath.Path)
			}
		}
		return paths
	}).WithTimeout(timeout).WithPolling(poll).Should(ConsistOf("/etc/gardener/local-backupbuckets"))
}

// withContainerAndReconcile sets the store's container and asks for a spec reconcile.
func withContainerAndReconcile(container string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Container = ptr.To(container)
		if e.Annotations == nil {
			e.Annotations = map[string]string{}
		}
		e.Annotations[druidv1alpha1.GardenerOperationAnnotation] = druidv1alpha1.OperationReconcile
	}
}
