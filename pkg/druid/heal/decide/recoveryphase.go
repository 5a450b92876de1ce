package decide

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// QuorumLossRecoveryAnnotation marks, on the StatefulSet, a case 10 recovery in progress; its value is the
// QuorumLossRecoveryPhase. It lives on the object that is scaled, so that the marker and the replica count
// change in one write: a druid that restarts mid-recovery finds the marker exactly when the StatefulSet was
// scaled to 0 for the recovery, and resumes at the phase it names.
const QuorumLossRecoveryAnnotation = "druid.gardener.cloud/quorum-loss-recovery"

// QuorumLossRecoveryPhase is how far a quorum-loss recovery (case 10) got. The recovery has six steps,
// numbered the same in code (the Step* constants), logs, events ("step n/6") and docs:
//
//  1. scale the StatefulSet to 0 and mark it (→ WaitingForPods);
//  2. WaitingForPods: wait until no member pod exists (→ SavingSurvivingData);
//  3. SavingSurvivingData: read every member volume's revision, upload the most advanced one as the newest
//     full snapshot when it is ahead of the backup (→ DeletingVolumes; see PlanSurvivingData);
//  4. DeletingVolumes: delete the members' data volumes and wait until they are gone (→ ResettingMembers);
//  5. ResettingMembers: recreate the member leases empty, clear status.members, set status.clusterSize to
//     spec.replicas and record the completion in the status;
//  6. scale the StatefulSet back to spec.replicas and remove the marker (→ Idle).
//
// Every step is idempotent and only ever moves the phase forward after its own work is done, so a druid
// that restarts at any point repeats at most the step it was in. Step 6 runs only after step 5's status
// write: if that write fails the phase stays ResettingMembers and step 5 runs again.
type QuorumLossRecoveryPhase string

const (
	// RecoveryIdle: no recovery in progress (no marker).
	RecoveryIdle QuorumLossRecoveryPhase = ""
	// RecoveryWaitingForPods is step 2: the StatefulSet is at 0, its pods are terminating.
	RecoveryWaitingForPods QuorumLossRecoveryPhase = "WaitingForPods"
	// RecoverySavingSurvivingData is step 3: the pods are gone; every member volume is read and the most
	// advanced one saved to the backup store before any volume is deleted.
	RecoverySavingSurvivingData QuorumLossRecoveryPhase = "SavingSurvivingData"
	// RecoveryDeletingVolumes is step 4: what the volumes held is in the store, the members' data volumes
	// are being deleted.
	RecoveryDeletingVolumes QuorumLossRecoveryPhase = "DeletingVolumes"
	// RecoveryResettingMembers is step 5 (followed by step 6): pods and volumes are gone, the leases and
	// the status start over.
	RecoveryResettingMembers QuorumLossRecoveryPhase = "ResettingMembers"
)

// The steps of the quorum-loss recovery, the one numbering that code, logs, events, lastOperation and
// docs use.
const (
	StepScaleToZero       = 1
	StepWaitForPods       = 2
	StepSaveSurvivingData = 3
	StepDeleteVolumes     = 4
	StepResetMembers      = 5
	StepScaleBack         = 6
	// RecoverySteps is the number of steps of the quorum-loss recovery.
	RecoverySteps = StepScaleBack
)

// Step is the number of the step the phase stands for (0 for Idle; a value RecoveryPhaseOf does not know
// counts as step 2, as RecoveryPhaseOf reads it).
func (p QuorumLossRecoveryPhase) Step() int {
	switch p {
	case RecoveryIdle:
		return 0
	case RecoveryWaitingForPods:
		return StepWaitForPods
	case RecoverySavingSurvivingData:
		return StepSaveSurvivingData
	case RecoveryDeletingVolumes:
		return StepDeleteVolumes
	case RecoveryResettingMembers:
		return StepResetMembers
	}
	return StepWaitForPods
}

// RecoveryPhaseOf reads the phase of the quorum-loss recovery from the StatefulSet's marker. A marker of
// an unknown value (an older druid wrote "waiting-for-pods-to-terminate") reads as WaitingForPods: step 2
// checks the world before anything moves on, so starting there is always safe.
func RecoveryPhaseOf(sts *appsv1.StatefulSet) QuorumLossRecoveryPhase {
	if sts == nil {
		return RecoveryIdle
	}
	switch p := QuorumLossRecoveryPhase(sts.Annotations[QuorumLossRecoveryAnnotation]); p {
	case RecoveryIdle, RecoveryWaitingForPods, RecoverySavingSurvivingData, RecoveryDeletingVolumes, RecoveryResettingMembers:
		return p
	}
	return RecoveryWaitingForPods
}

// StepLabel is "step n/6", the way logs, events and the status name a step of the recovery.
func StepLabel(step int) string { return fmt.Sprintf("step %d/%d", step, RecoverySteps) }
