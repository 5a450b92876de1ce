package compaction

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/compaction"
)

// A Local store druid refuses to mount (here a backup secret naming /var/lib/kubelet) gets no compaction
// Job; the refusal is on the Etcd, as the condition and a Warning event naming the path, not only in
// druid's log.
func TestRefusedLocalStoreIsReportedOnTheEtcd(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etcd-backup"},
		Data: map[string][]byte{"hostPath": []byte("/var/lib/kubelet")}})).To(Succeed())
	etcd := createEtcd(t, ns, ptr.To(int64(100)), func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
		e.Spec.Backup.Store.EndpointOverride = nil
	})
	setRevisions(t, etcd, 1000, 1100)

	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout).WithPolling(poll).Should(And(
		Not(BeNil()),
		HaveField("Status", druidv1alpha1.ConditionFalse),
		HaveField("Reason", compaction.ReasonLocalStoreRefused),
		HaveField("Message", ContainSubstring("/var/lib/kubelet")),
	))
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(compaction.EventReasonLocalStoreRefused))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty())
}
