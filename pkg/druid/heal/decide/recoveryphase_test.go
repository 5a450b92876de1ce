package decide

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The marker's value is the phase; no marker is Idle, and a value this druid does not know (an older
// druid's "waiting-for-pods-to-terminate") resumes at step 2, which checks the world before moving on.
func TestRecoveryPhaseOf(t *testing.T) {
	g := NewWithT(t)
	marked := func(value string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{QuorumLossRecoveryAnnotation: value}}}
	}
	g.Expect(RecoveryPhaseOf(nil)).To(Equal(RecoveryIdle))
	g.Expect(RecoveryPhaseOf(&appsv1.StatefulSet{})).To(Equal(RecoveryIdle))
	for _, p := range []QuorumLossRecoveryPhase{RecoveryWaitingForPods, RecoverySavingSurvivingData, RecoveryDeletingVolumes, RecoveryResettingMembers} {
		g.Expect(RecoveryPhaseOf(marked(string(p)))).To(Equal(p))
	}
	g.Expect(RecoveryPhaseOf(marked("waiting-for-pods-to-terminate"))).To(Equal(RecoveryWaitingForPods))
	g.Expect([]int{RecoveryIdle.Step(), RecoveryWaitingForPods.Step(), RecoverySavingSurvivingData.Step(), RecoveryDeletingVolumes.Step(),
		RecoveryResettingMembers.Step()}).To(Equal([]int{0, 2, 3, 4, 5}))
	g.Expect(StepLabel(StepScaleBack)).To(Equal("step 6/6"))
}
