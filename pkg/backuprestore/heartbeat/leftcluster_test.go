package heartbeat

import (
	"testing"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/scaledown"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// The backup leader's mark on a renewed lease: read with the holder's member ID, kept by the member's own
// renewals, cleared again; druid reads the same annotation.
func TestLeftClusterMarksOnARenewedLease(t *testing.T) {
	g := NewWithT(t)
	g.Expect(AnnotationLeftCluster).To(Equal(druidv1alpha1.LeftClusterAnnotation))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	m := etcdserver.Start(t).Members[0]
	emptyLease(t, cs, ns, "etcd-main-1")
	marks := LeftClusterMarks{Kubernetes: cs, Namespace: ns}

	state, err := marks.Get(t.Context(), "etcd-main-1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state).To(Equal(scaledown.LeaseState{}), "a lease druid created and nobody renewed names no member")
	_, err = marks.Get(t.Context(), "etcd-main-9")
	g.Expect(err).To(MatchError(scaledown.ErrLeaseNotFound))

	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: "etcd-main-1", Etcd: m.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	id, _ := memberIDs(m)
	state, err = marks.Get(t.Context(), "etcd-main-1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state.HolderMemberID).To(Equal(id))

	g.Expect(marks.SetLeft(t.Context(), "etcd-main-1", id)).To(Succeed())
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	g.Expect(getLease(t, cs, ns, "etcd-main-1").Annotations).To(HaveKeyWithValue(druidv1alpha1.LeftClusterAnnotation, id), "a renewal keeps the mark")
	left, err := marks.LeftCluster(t.Context(), "etcd-main-1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeTrue())

	g.Expect(marks.SetLeft(t.Context(), "etcd-main-1", "")).To(Succeed())
	g.Expect(getLease(t, cs, ns, "etcd-main-1").Annotations).NotTo(HaveKey(druidv1alpha1.LeftClusterAnnotation))
	left, err = marks.LeftCluster(t.Context(), "etcd-main-9")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeFalse(), "a missing lease carries no mark")
}
