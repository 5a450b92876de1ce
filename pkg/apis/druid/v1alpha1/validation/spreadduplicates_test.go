package validation_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

func spread(key string, when corev1.UnsatisfiableConstraintAction) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: when}
}

// A duplicate spread constraint is reported by its identity (topologyKey, whenUnsatisfiable), not by
// list index: an Etcd stored with a duplicate takes an update that adds a constraint in front of it
// (shifting every index), while an update that adds a new duplicate is refused.
func TestDuplicateSpreadConstraintsRatchetByIdentity(t *testing.T) {
	zone, host := "topology.kubernetes.io/zone", "kubernetes.io/hostname"
	stored := with(validEtcd(), func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
			spread(zone, corev1.DoNotSchedule), spread(zone, corev1.DoNotSchedule),
		}
	})
	expectSingleError(t, validation.ValidateEtcd(stored), "spec.schedulingConstraints.topologySpreadConstraints", field.ErrorTypeDuplicate, zone)

	prepended := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) {
		c := &e.Spec.SchedulingConstraints
		c.TopologySpreadConstraints = append([]corev1.TopologySpreadConstraint{spread(host, corev1.ScheduleAnyway)}, c.TopologySpreadConstraints...)
	})
	if errs := validation.ValidateEtcdUpdate(prepended, stored); len(errs) != 0 {
		t.Errorf("prepending a constraint to a stored duplicate: %v; want admitted", errs)
	}

	newDuplicate := with(prepended.DeepCopy(), func(e *druidv1alpha1.Etcd) {
		c := &e.Spec.SchedulingConstraints
		c.TopologySpreadConstraints = append(c.TopologySpreadConstraints, spread(host, corev1.ScheduleAnyway))
	})
	expectSingleError(t, validation.ValidateEtcdUpdate(newDuplicate, prepended), "spec.schedulingConstraints.topologySpreadConstraints", field.ErrorTypeDuplicate, host)

	third := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) {
		c := &e.Spec.SchedulingConstraints
		c.TopologySpreadConstraints = append(c.TopologySpreadConstraints, spread(zone, corev1.DoNotSchedule))
	})
	if errs := validation.ValidateEtcdUpdate(third, stored); len(errs) == 0 {
		t.Error("a third copy of a stored duplicate: admitted; want refused")
	}
}
