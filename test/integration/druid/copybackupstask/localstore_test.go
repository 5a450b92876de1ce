package copybackupstask

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/copybackupstask"
)

// A Local store druid refuses to mount (a backup secret naming /var/lib/kubelet) gets no worker Job, and
// the task says so — Failed=True naming the path and a Warning event — instead of waiting forever with the
// refusal only in druid's log: Gardener waits for one of the two conditions.
func TestRefusedLocalStoreFailsTheTask(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "source-etcd-backup"},
		Data: map[string][]byte{"hostPath": []byte("/var/lib/kubelet")}})).To(Succeed())
	task := &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-main-copy"},
		Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
			SourceStore: druidv1alpha1.StoreSpec{Container: ptr.To("old"), Prefix: "shoot--dev--x/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderLocal),
				SecretRef: &corev1.SecretReference{Name: "source-etcd-backup"}},
			TargetStore: druidv1alpha1.StoreSpec{Container: ptr.To("new"), Prefix: "shoot--dev--x/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderLocal)},
		},
	}
	g.Expect(env.Client.Create(ctx, task)).To(Succeed())

	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, copybackupstask.ReasonLocalStoreRefused),
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, copybackupstask.ReasonLocalStoreRefused),
		HaveField("LastError", HaveValue(And(ContainSubstring("/var/lib/kubelet"), ContainSubstring("source-etcd-backup")))),
	))
	g.Eventually(func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == task.Name && e.Type == corev1.EventTypeWarning {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(copybackupstask.EventReasonLocalStoreRefused))
	g.Consistently(func(g Gomega) []batchv1.Job {
		list := &batchv1.JobList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		return list.Items
	}).WithTimeout(2 * time.Second).WithPolling(poll).Should(BeEmpty())
}

// Source and target Local stores with the same container (but different prefixes, so the validation
// admits them) would both be mounted at $HOME/<container> in the worker pod, which the apiserver refuses
// to create: the task fails naming the container instead of retrying a Job that can never be created.
func TestLocalStoresSharingAContainerFailTheTask(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	local := func(prefix string) druidv1alpha1.StoreSpec {
		return druidv1alpha1.StoreSpec{Container: ptr.To("shared"), Prefix: prefix, Provider: ptr.To(druidv1alpha1.StorageProviderLocal)}
	}
	task := &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-main-copy"},
		Spec:       druidv1alpha1.EtcdCopyBackupsTaskSpec{SourceStore: local("shoot--dev--x/etcd-main"), TargetStore: local("shoot--dev--x2/etcd-main")},
	}
	g.Expect(env.Client.Create(ctx, task)).To(Succeed())

	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, copybackupstask.ReasonLocalStoreRefused),
		HaveField("LastError", HaveValue(ContainSubstring(`"shared"`))),
	))
	g.Consistently(func(g Gomega) []batchv1.Job {
		list := &batchv1.JobList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		return list.Items
	}).WithTimeout(2 * time.Second).WithPolling(poll).Should(BeEmpty())
}
