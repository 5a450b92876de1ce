package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestMemberStatus(t *testing.T) {
	const holder = "8e9e05c52164694d:cdf818194e3a8c32:Member"
	for name, tc := range map[string]struct {
		lease      coordinationv1.Lease
		pod        *corev1.Pod
		wantOK     bool
		wantStatus druidv1alpha1.EtcdMemberConditionStatus
		wantReason string
	}{
		"never renewed: not bootstrapped": {lease: lease("etcd-main-0", "", -1), pod: pod("etcd-main-0", true)},
		"fresh lease":                     {lease: lease("etcd-main-0", holder, 10*time.Second), pod: pod("etcd-main-0", true), wantOK: true, wantStatus: "Ready", wantReason: "LeaseSucceeded"},
		"fresh lease, pod not ready":      {lease: lease("etcd-main-0", holder, 10*time.Second), pod: pod("etcd-main-0", false), wantOK: true, wantStatus: "Ready", wantReason: "LeaseSucceeded"},
		"at the unknown threshold":        {lease: lease("etcd-main-0", holder, time.Minute), pod: pod("etcd-main-0", true), wantOK: true, wantStatus: "Ready", wantReason: "LeaseSucceeded"},
		"expired, pod ready":              {lease: lease("etcd-main-0", holder, 2*time.Minute), pod: pod("etcd-main-0", true), wantOK: true, wantStatus: "Unknown", wantReason: "LeaseExpired"},
		"expired, pod not ready":          {lease: lease("etcd-main-0", holder, 2*time.Minute), pod: pod("etcd-main-0", false), wantOK: true, wantStatus: "NotReady", wantReason: "PodNotReady"},
		"expired, pod missing":            {lease: lease("etcd-main-0", holder, 2*time.Minute), wantOK: true, wantStatus: "NotReady", wantReason: "PodNotReady"},
		"past both thresholds, pod ready": {lease: lease("etcd-main-0", holder, 7*time.Minute), pod: pod("etcd-main-0", true), wantOK: true, wantStatus: "NotReady", wantReason: "UnknownGracePeriodExceeded"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got, ok := MemberStatus(&tc.lease, tc.pod, th, now)
			g.Expect(ok).To(Equal(tc.wantOK))
			if !ok {
				return
			}
			g.Expect(got.Status).To(Equal(tc.wantStatus))
			g.Expect(got.Reason).To(Equal(tc.wantReason))
			g.Expect(got.ID).To(Equal(ptr.To("8e9e05c52164694d")))
			g.Expect(got.Role).To(Equal(ptr.To(druidv1alpha1.EtcdRoleMember)))
		})
	}
}

func TestMemberStatusWithoutHolderIdentity(t *testing.T) {
	g := NewWithT(t)
	l := lease("etcd-main-0", "", time.Second)
	got, ok := MemberStatus(&l, pod("etcd-main-0", true), th, now)
	g.Expect(ok).To(BeTrue())
	g.Expect(got.ID).To(BeNil())
	g.Expect(got.Role).To(BeNil())
}

func TestMembersKeepTransitionTimeAndSortByOrdinal(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(3)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	etcd.Status.Members = []druidv1alpha1.EtcdMemberStatus{
		{Name: "etcd-main-0", Status: "Ready", LastTransitionTime: earlier},
		{Name: "etcd-main-1", Status: "Ready", LastTransitionTime: earlier},
	}
	leases := []coordinationv1.Lease{
		lease("etcd-main-10", "c:Member", time.Second),
		lease("etcd-main-1", "b:Member", 2*time.Minute),
		lease("etcd-main-2", "", -1),
		lease("etcd-main-0", "a:Leader", time.Second),
	}
	pods := map[string]*corev1.Pod{"etcd-main-0": pod("etcd-main-0", true), "etcd-main-1": pod("etcd-main-1", true)}
	members := Members(etcd, leases, pods, th, now)
	g.Expect(members).To(HaveLen(3))
	g.Expect([]string{members[0].Name, members[1].Name, members[2].Name}).To(Equal([]string{"etcd-main-0", "etcd-main-1", "etcd-main-10"}))
	g.Expect(members[0].LastTransitionTime).To(Equal(earlier), "unchanged status keeps its transition time")
	g.Expect(members[1].Status).To(Equal(druidv1alpha1.EtcdMemberStatusUnknown))
	g.Expect(members[1].LastTransitionTime.Time).To(Equal(now), "changed status transitions now")
	g.Expect(members[2].LastTransitionTime.Time).To(Equal(now), "new member transitions now")
}

func TestMembersWithMemberNamePrefixFindThePod(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(1)
	etcd.Spec.MemberNamePrefix = ptr.To("shoot--a")
	leases := []coordinationv1.Lease{lease("shoot--a-etcd-main-0", "a:Leader", 2*time.Minute)}
	members := Members(etcd, leases, map[string]*corev1.Pod{"etcd-main-0": pod("etcd-main-0", true)}, th, now)
	g.Expect(members).To(HaveLen(1))
	g.Expect(members[0].Status).To(Equal(druidv1alpha1.EtcdMemberStatusUnknown), "the ready pod etcd-main-0 belongs to member shoot--a-etcd-main-0")
}
