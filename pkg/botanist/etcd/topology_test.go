package etcd

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestTopologySpreadConstraintsFollowGardenersFailureTolerance(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--p--s"}}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}}
	host := func(when corev1.UnsatisfiableConstraintAction, minDomains *int32) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: when, MinDomains: minDomains, LabelSelector: selector}
	}
	zone := func(minDomains int32) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To(minDomains), LabelSelector: selector}
	}
	for _, tc := range []struct {
		name     string
		replicas int32
		zones    int32
		ftt      FailureToleranceType
		want     []corev1.TopologySpreadConstraint
	}{
		{name: "single member, zonal HA asked", replicas: 1, zones: 3, ftt: FailureToleranceTypeZone, want: nil},
		{name: "hibernated", replicas: 0, zones: 3, want: nil},
		{name: "node tolerance, one zone", replicas: 3, zones: 1, ftt: FailureToleranceTypeNode, want: []corev1.TopologySpreadConstraint{host(corev1.DoNotSchedule, ptr.To(int32(3)))}},
		{name: "node tolerance, three zones: stays in one zone", replicas: 3, zones: 3, ftt: FailureToleranceTypeNode, want: []corev1.TopologySpreadConstraint{host(corev1.DoNotSchedule, ptr.To(int32(3)))}},
		{name: "zone tolerance, three zones", replicas: 3, zones: 3, ftt: FailureToleranceTypeZone, want: []corev1.TopologySpreadConstraint{host(corev1.DoNotSchedule, ptr.To(int32(3))), zone(3)}},
		{name: "zone tolerance, five members in three zones", replicas: 5, zones: 3, ftt: FailureToleranceTypeZone, want: []corev1.TopologySpreadConstraint{host(corev1.DoNotSchedule, ptr.To(int32(3))), zone(3)}},
		{name: "zone tolerance, a single zone: no zone spread", replicas: 3, zones: 1, ftt: FailureToleranceTypeZone, want: []corev1.TopologySpreadConstraint{host(corev1.DoNotSchedule, ptr.To(int32(3)))}},
		{name: "scaled out without HA, two zones", replicas: 3, zones: 2, want: []corev1.TopologySpreadConstraint{host(corev1.ScheduleAnyway, nil), zone(2)}},
		{name: "scaled out without HA, one zone", replicas: 3, zones: 1, want: []corev1.TopologySpreadConstraint{host(corev1.ScheduleAnyway, nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(topologySpreadConstraints(etcd, tc.replicas, tc.zones, tc.ftt)).To(Equal(tc.want))
		})
	}
}

func TestHighAvailabilityDefaultsToNodeTolerance(t *testing.T) {
	g := NewWithT(t)
	g.Expect(New(nil, "ns", Values{Role: RoleMain, HighAvailability: true}).(*etcd).values.FailureToleranceType).To(Equal(FailureToleranceTypeNode))
	g.Expect(New(nil, "ns", Values{Role: RoleMain, HighAvailability: true, FailureToleranceType: FailureToleranceTypeZone}).(*etcd).values.FailureToleranceType).To(Equal(FailureToleranceTypeZone))
	g.Expect(New(nil, "ns", Values{Role: RoleMain}).(*etcd).values.FailureToleranceType).To(BeEmpty())
}

// A running multi-member Etcd keeps its spread (none included): a hard rule added now could leave a
// rolled member Pending next to the volume that pins it. New Etcds and single members get Gardener's.
func TestRunningMultiMemberEtcdKeepsItsSpread(t *testing.T) {
	g := NewWithT(t)
	newEtcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--p--s"}}
	g.Expect(spreadConstraints(nil, newEtcd, 3, 3, FailureToleranceTypeZone)).To(HaveLen(2), "a new Etcd")

	single := newEtcd.DeepCopy()
	single.Spec.Replicas = 1
	g.Expect(spreadConstraints(single, single, 3, 3, FailureToleranceTypeZone)).To(HaveLen(2), "a single member scaled up")

	running := newEtcd.DeepCopy()
	running.Spec.Replicas = 3
	g.Expect(spreadConstraints(running, running, 3, 3, FailureToleranceTypeZone)).To(BeEmpty(), "a running cluster without spread")
	own := []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}}
	running.Spec.SchedulingConstraints.TopologySpreadConstraints = own
	g.Expect(spreadConstraints(running, running, 5, 3, FailureToleranceTypeZone)).To(Equal(own), "a running cluster's own spread")
}
