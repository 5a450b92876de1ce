package heal

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
)

// The quorum-loss recovery deletes the claims the StatefulSet made for its members, and no other claim
// of the namespace.
func TestIsMemberVolume(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main"}, Spec: appsv1.StatefulSetSpec{
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "main-etcd"}}},
	}}
	for name, want := range map[string]bool{
		"main-etcd-etcd-main-0":        true,
		"main-etcd-etcd-main-12":       true,
		"main-etcd-etcd-main-":         false,
		"main-etcd-etcd-main-0-backup": false,
		"main-etcd-etcd-main-01":       false, // the StatefulSet never writes a leading zero
		"main-etcd-etcd-main-events-0": false,
		"other-etcd-main-0":            false,
		"main-etcd-etcd-events-0":      false,
	} {
		if got := isMemberVolume(sts, name); got != want {
			t.Errorf("isMemberVolume(%q) = %v, want %v", name, got, want)
		}
	}
}

// A recovery held at step 3 keeps its run ID when it goes on; a finished recovery, or case 10 held back
// without a backup, does not lend its run ID to the next recovery.
func TestHeldAtStep3(t *testing.T) {
	held := recoveryProgress(decide.StepSaveSurvivingData, "cannot tell what every member volume holds")
	for name, c := range map[string]struct {
		reason string
		state  druidv1alpha1.LastOperationState
		desc   string
		want   bool
	}{
		"held at step 3":          {ReasonManualInterventionRequired, druidv1alpha1.LastOperationStateError, held, true},
		"finished recovery":       {ReasonRecoveryCompleted, druidv1alpha1.LastOperationStateSucceeded, recoveryProgress(decide.StepScaleBack, "scaled back"), false},
		"no backup (case 10)":     {ReasonManualInterventionRequired, druidv1alpha1.LastOperationStateSucceeded, "reconciled", false},
		"held, other description": {ReasonManualInterventionRequired, druidv1alpha1.LastOperationStateError, "spec reconcile failed", false},
	} {
		got := heldAtStep3(&druidv1alpha1.Condition{Reason: c.reason}, &druidv1alpha1.LastOperation{State: c.state, Description: c.desc})
		if got != c.want {
			t.Errorf("%s: heldAtStep3 = %v, want %v", name, got, c.want)
		}
	}
}
