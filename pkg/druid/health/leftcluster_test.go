package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestMayStillBeMember(t *testing.T) {
	renewed := func(holder string, annotations map[string]string) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-2", Annotations: annotations},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &metav1.MicroTime{Time: time.Now()}},
		}
	}
	left := func(id string) map[string]string { return map[string]string{druidv1alpha1.LeftClusterAnnotation: id} }
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  bool
	}{
		{"missing lease: cannot tell", nil, true},
		{"never renewed: no evidence (a woken-up cluster's leases are new, its volumes hold voters)", &coordinationv1.Lease{}, true},
		{"never renewed, the leader found no such member", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Annotations: left(druidv1alpha1.LeftClusterNeverJoined)}}, false},
		{"renewed, no annotation", renewed("8e9e:cdf8:Member", nil), true},
		{"leader's annotation names the holder's member", renewed("8e9e:cdf8:Member", left("8e9e")), false},
		{"older two-part holder identity", renewed("8e9e:Leader", left("8e9e")), false},
		{"member joined again with a new ID since the removal", renewed("aaaa:cdf8:Member", left("8e9e")), true},
		{"annotation on a lease whose holder is unreadable", renewed("garbage", left("none")), false},
		{"renewed with an unreadable holder, no annotation", renewed("garbage", nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(MayStillBeMember(tc.lease)).To(Equal(tc.want))
		})
	}
}
