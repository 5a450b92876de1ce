package heal

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/permissions"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// The quorum-loss recovery (the decision table's case 10) runs over several heal runs, one step or more per run,
// as the phases of decide.QuorumLossRecoveryPhase (which lists the six steps). The phase is the value of
// the marker on the StatefulSet and moves forward only after a step's work is done, so a druid that
// restarts at any point resumes at the step the stored StatefulSet names. Each step has its own event
// action, because the events recorder folds events that differ only in their message into one series.
// The spec flow holds back while the marker is set (QuorumLossRecoveryInProgress).
//
// Why step 4 deletes the data volumes: a minority member that kept its data would restart into the old
// membership and wait for peers that no longer exist, while the wiped majority waits for it — nobody
// would restore. What the volumes held beyond the last delta snapshot is saved first, by step 3
// (survivingdata.go): the most advanced volume is uploaded as the newest full snapshot, and the members
// restore from it.

// RecoveryPollPeriod is how often a recovery that waits (for pods, for volumes) looks again.
const RecoveryPollPeriod = 2 * time.Second

// startQuorumLossRecovery is step 1: confirmed against the apiserver's leases and pods, scale the
// StatefulSet to 0 and mark it WaitingForPods, in one write.
func (h *healRun) startQuorumLossRecovery(ctx context.Context) error {
	a, _, confirmed, err := h.confirmFromAPIServer(ctx, decide.KindStartQuorumRecovery)
	if err != nil || !confirmed {
		log.FromContext(ctx).V(1).Info("Quorum loss not confirmed by the apiserver's leases and pods", "error", err)
		return err
	}
	missing, err := h.missingPVCDeletion(ctx)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		// Step 4 would fail after step 1 scaled the cluster to 0: stop before anything changes.
		msg := fmt.Sprintf("%s; the quorum-loss recovery needs permission to %s, which druid's role does not grant: nothing was changed",
			a.Message, permissions.Join(missing))
		log.FromContext(ctx).Info("Quorum lost, recovery not started: " + msg)
		h.deps.Recorder.Eventf(h.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "PermissionsMissing", "%s", msg)
		h.recordRecovery(druidv1alpha1.LastOperationStateError, druidv1alpha1.ConditionFalse, ReasonRecoveryPermissionsMissing, msg)
		return nil
	}
	if err := h.setRecoveryPhase(ctx, h.input.Observed.StatefulSet, 0, decide.RecoveryWaitingForPods, ""); err != nil {
		return err
	}
	h.outcome.RecoveryStarted = true
	log.FromContext(ctx).Info("Quorum lost: "+decide.StepLabel(decide.StepScaleToZero)+" scaled the StatefulSet to 0 to bootstrap the cluster again from the backup", "members", a.Members)
	h.deps.Recorder.Eventf(h.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "ScaleToZero",
		"%s; %s: scaled the StatefulSet to 0", a.Message, decide.StepLabel(decide.StepScaleToZero))
	h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
		recoveryProgress(decide.StepWaitForPods, "scaled the StatefulSet to 0, waiting for the member pods to terminate"))
	h.requeue(RecoveryPollPeriod, "waiting for the member pods to terminate")
	return nil
}

// continueQuorumLossRecovery drives steps 2 to 5 from the phase on the stored StatefulSet; step 6 follows
// the status write (finishQuorumLossRecovery).
func (h *healRun) continueQuorumLossRecovery(ctx context.Context, a decide.Action) error {
	logger := log.FromContext(ctx)
	// The cache can still show the marker after the previous flow finished the recovery; acting on that
	// would delete the leases the members are already renewing. The stored StatefulSet decides.
	sts := &appsv1.StatefulSet{}
	if err := h.deps.Reader.Get(ctx, client.ObjectKeyFromObject(h.input.Observed.StatefulSet), sts); err != nil {
		return fmt.Errorf("reading statefulset %s: %w", h.input.Observed.StatefulSet.Name, err)
	}
	phase := decide.RecoveryPhaseOf(sts)
	if phase == decide.RecoveryIdle {
		logger.V(1).Info("Quorum-loss recovery already finished; the cache lags behind")
		h.requeue(RecoveryPollPeriod, "the cache lags behind the finished quorum-loss recovery")
		return nil
	}
	// Step 5 ends with a status write that must not fail on a cached Etcd's stale resourceVersion (step 5
	// would then run again): the flow continues from the stored Etcd.
	if err := h.deps.Reader.Get(ctx, client.ObjectKeyFromObject(h.etcd), h.etcd); err != nil {
		return fmt.Errorf("reading etcd %s: %w", h.etcd.Name, err)
	}
	h.adjust(func(o *health.Observed) { o.Etcd, o.StatefulSet = druidv1alpha1.Defaulted(h.etcd), sts })
	if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
		// Someone scaled the StatefulSet up mid-recovery: back to 0, and wait for the pods again.
		phase = decide.RecoveryWaitingForPods
		if err := h.setRecoveryPhase(ctx, sts, 0, phase, ""); err != nil {
			return err
		}
	}
	logger = logger.WithValues("phase", phase)
	ctx = log.IntoContext(ctx, logger)

	if phase == decide.RecoveryWaitingForPods {
		done, err := h.waitForMemberPodsGone(ctx, sts)
		if err != nil || !done {
			return err
		}
		// Step 3 starts without Jobs, so that no result of an earlier recovery is read again.
		if done, err := h.deleteSurvivingDataJobs(ctx); err != nil || !done {
			return err
		}
		phase = decide.RecoverySavingSurvivingData
		if err := h.setRecoveryPhase(ctx, sts, 0, phase, ""); err != nil {
			return err
		}
	}
	if phase == decide.RecoverySavingSurvivingData {
		read, done, err := h.saveSurvivingData(ctx, sts)
		if err != nil || !done {
			return err
		}
		phase = decide.RecoveryDeletingVolumes
		if err := h.setRecoveryPhase(ctx, sts, 0, phase, read); err != nil {
			return err
		}
	}
	if phase == decide.RecoveryDeletingVolumes {
		if done, err := h.deleteSurvivingDataJobs(ctx); err != nil || !done {
			return err
		}
		done, err := h.deleteMemberVolumes(ctx, sts)
		if err != nil || !done {
			return err
		}
		phase = decide.RecoveryResettingMembers
		if err := h.setRecoveryPhase(ctx, sts, 0, phase, ""); err != nil {
			return err
		}
	}
	return h.resetMembers(ctx, a.Replicas)
}

// waitForMemberPodsGone is step 2: done once no member pod exists (read from the apiserver, not the
// cache): no pod of the StatefulSet sts, and no pod without an owner named as a member — an orphaned
// member may still run etcd on a volume step 4 deletes, and it does not go away with the StatefulSet's
// scale-down. Pods that only carry the member labels under another controller or name are no members
// (health.MemberPods) and do not hold the recovery back.
func (h *healRun) waitForMemberPodsGone(ctx context.Context, sts *appsv1.StatefulSet) (bool, error) {
	pods, err := listMemberPods(ctx, h.deps.Reader, h.etcd, sts)
	if err != nil {
		return false, err
	}
	n := len(pods)
	if n == 0 {
		return true, nil
	}
	log.FromContext(ctx).V(1).Info("Waiting for member pods to terminate", "pods", n)
	h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
		recoveryProgress(decide.StepWaitForPods, fmt.Sprintf("StatefulSet at 0 replicas, waiting for %d member pod(s) to terminate", n)))
	h.requeue(RecoveryPollPeriod, "waiting for the member pods to terminate")
	return false, nil
}

// deleteMemberVolumes is step 4, once step 3 saved what they hold and its Jobs are gone: it deletes the data volume claims of
// the StatefulSet's members (named <claim template>-<statefulset>-<ordinal>, whatever the ordinal) that
// are not being deleted yet, and is done once none is left. It reads from the apiserver: a cached claim that is already gone would hold the
// recovery back for a poll period. A claim step 3 did not read (decide.UnreadVolumes) sends the recovery
// back to step 2, before anything is deleted, so that every volume is read again.
func (h *healRun) deleteMemberVolumes(ctx context.Context, sts *appsv1.StatefulSet) (bool, error) {
	list := &corev1.PersistentVolumeClaimList{}
	if err := h.deps.Reader.List(ctx, list, client.InNamespace(sts.Namespace)); err != nil {
		return false, fmt.Errorf("listing the member data volumes: %w", err)
	}
	var claims, live []*corev1.PersistentVolumeClaim
	for i := range list.Items {
		if claim := &list.Items[i]; isMemberVolume(sts, claim.Name) {
			claims = append(claims, claim)
			if claim.DeletionTimestamp == nil {
				live = append(live, claim)
			}
		}
	}
	if unread := decide.UnreadVolumes(sts.Annotations[decide.ReadVolumesAnnotation], live); len(unread) > 0 {
		return false, h.readVolumesAgain(ctx, sts, unread)
	}
	var remaining []string
	for _, claim := range claims {
		remaining = append(remaining, claim.Name)
		if claim.DeletionTimestamp != nil {
			continue
		}
		if err := h.deps.Client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting data volume %s: %w", claim.Name, err)
		}
		log.FromContext(ctx).Info("Deleted a member data volume for the quorum-loss recovery", "step", decide.StepLabel(decide.StepDeleteVolumes), "pvc", claim.Name)
		h.deps.Recorder.Eventf(h.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "DeleteMemberVolume",
			"%s: deleted data volume %s; the cluster is bootstrapped again from the backup", decide.StepLabel(decide.StepDeleteVolumes), claim.Name)
	}
	if len(remaining) == 0 {
		return true, nil
	}
	log.FromContext(ctx).Info("Waiting for the member data volumes to be deleted", "pvcs", remaining)
	h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
		recoveryProgress(decide.StepDeleteVolumes, fmt.Sprintf("member pods gone, waiting for %d data volume(s) to be deleted: %s", len(remaining), strings.Join(remaining, ", "))))
	h.requeue(RecoveryPollPeriod, "waiting for the member data volumes to be deleted")
	return false, nil
}

// readVolumesAgain sends the recovery back to step 2 because step 3 did not read the unread claims:
// step 2 finds the pods gone and removes step 3's Jobs, and step 3 reads every volume again.
func (h *healRun) readVolumesAgain(ctx context.Context, sts *appsv1.StatefulSet, unread []string) error {
	what := fmt.Sprintf("data volume(s) %s were not read in %s (created or replaced since); reading every member volume again before any is deleted",
		strings.Join(unread, ", "), decide.StepLabel(decide.StepSaveSurvivingData))
	log.FromContext(ctx).Info("Quorum-loss recovery back to reading the member volumes", "step", decide.StepLabel(decide.StepDeleteVolumes), "unread", unread)
	h.deps.Recorder.Eventf(h.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "ReadVolumesAgain", "%s: %s", decide.StepLabel(decide.StepDeleteVolumes), what)
	h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
		recoveryProgress(decide.StepDeleteVolumes, what))
	h.requeue(RecoveryPollPeriod, "reading the member volumes again")
	return h.setRecoveryPhase(ctx, sts, 0, decide.RecoveryWaitingForPods, "")
}

// resetMembers is step 5: every member lease is recreated empty (through the member Lease operator), the
// members are cleared and clusterSize is spec.replicas — the members bootstrap a new cluster, and their
// sidecars restore it from the backup. The completion goes into the status written next; step 6 follows it.
func (h *healRun) resetMembers(ctx context.Context, replicas int32) error {
	leases, err := h.deps.MemberLeases.Reset(ctx, h.outcome.Observed.Etcd, replicas)
	if err != nil {
		return err
	}
	h.adjust(func(o *health.Observed) {
		o.Etcd.Status.Members = nil
		o.ClusterSize = replicas
		o.MemberLeases = leases
	})
	log.FromContext(ctx).Info(decide.StepLabel(decide.StepResetMembers)+": member pods and data volumes gone; member leases recreated, members cleared", "clusterSize", replicas)
	h.deps.Recorder.Eventf(h.etcd, nil, "Normal", EventReasonQuorumLossRecovery, "RecreateMemberLeases",
		"%s: member pods and data volumes gone; recreated %d empty member leases, cleared the members, clusterSize %d", decide.StepLabel(decide.StepResetMembers), len(leases), replicas)
	h.recordRecovery(druidv1alpha1.LastOperationStateSucceeded, druidv1alpha1.ConditionFalse, ReasonRecoveryCompleted,
		recoveryProgress(decide.StepScaleBack, fmt.Sprintf("scaled the StatefulSet back to %d, members bootstrapping from the backup", replicas)))
	h.outcome.ScaleBackTo = ptr.To(replicas)
	return nil
}

// FinishQuorumLossRecovery is step 6: after the status write that says step 5 completed, it scales the
// StatefulSet back to outcome.ScaleBackTo (nothing to do without it) and removes the recovery marker.
// Scaling back only once the status says the recovery completed keeps the two consistent: if the status
// write fails (e.g. a conflict), the StatefulSet keeps the marker at ResettingMembers and the next run
// repeats step 5, which is idempotent; if the StatefulSet write fails, the marker stays too and the next
// run repeats steps 5 and 6. Scaling back first instead would lose the completion whenever the status
// write that follows it fails, and leave the condition saying "in progress" for good.
func FinishQuorumLossRecovery(ctx context.Context, deps Deps, etcd *druidv1alpha1.Etcd, outcome Outcome) error {
	if outcome.ScaleBackTo == nil {
		return nil
	}
	h := &healRun{deps: deps, etcd: etcd}
	replicas := *outcome.ScaleBackTo
	if err := h.setRecoveryPhase(ctx, outcome.Observed.StatefulSet, replicas, decide.RecoveryIdle, ""); err != nil {
		return err
	}
	log.FromContext(ctx).Info(decide.StepLabel(decide.StepScaleBack)+": scaled the StatefulSet back: members bootstrap and restore from the backup", "replicas", replicas)
	deps.Recorder.Eventf(etcd, nil, "Normal", EventReasonQuorumLossRecovery, "ScaleBack",
		"%s: scaled the StatefulSet back to %d; the members bootstrap a new cluster and restore it from the backup", decide.StepLabel(decide.StepScaleBack), replicas)
	return nil
}

// setRecoveryPhase writes replicas, the phase marker (removed for Idle) and the record of the volumes
// step 3 read (decide.ReadVolumesAnnotation; readVolumes is empty, and the record removed, for every
// phase but DeletingVolumes) in one write through the StatefulSet operator, guarded by the resourceVersion
// sts was read with.
func (h *healRun) setRecoveryPhase(ctx context.Context, sts *appsv1.StatefulSet, replicas int32, phase decide.QuorumLossRecoveryPhase, readVolumes string) error {
	return h.deps.StatefulSets.ScaleWithMarkers(ctx, sts, replicas, map[string]string{
		decide.QuorumLossRecoveryAnnotation: string(phase), decide.ReadVolumesAnnotation: readVolumes})
}

// isMemberVolume tells whether a claim name is one the StatefulSet creates for a member.
func isMemberVolume(sts *appsv1.StatefulSet, name string) bool {
	_, ok := memberVolumeOrdinal(sts, name)
	return ok
}

// memberVolumeOrdinal is the ordinal of a claim the StatefulSet creates for a member
// (<claim template>-<statefulset>-<ordinal>), or false for any other claim.
func memberVolumeOrdinal(sts *appsv1.StatefulSet, name string) (int, bool) {
	for _, template := range sts.Spec.VolumeClaimTemplates {
		if ordinal, ok := etcdpod.OrdinalAfter(name, template.Name+"-"+sts.Name+"-"); ok {
			return ordinal, true
		}
	}
	return 0, false
}

// recoveryProgress is the lastOperation description and condition message of a recovery at step.
func recoveryProgress(step int, what string) string {
	return fmt.Sprintf("quorum-loss recovery %s: %s", decide.StepLabel(step), what)
}

// recordRecovery puts the recovery's progress into lastOperation and the QuorumLossRecovery condition of
// the status the heal flow writes next.
func (h *healRun) recordRecovery(state druidv1alpha1.LastOperationState, cs druidv1alpha1.ConditionStatus, reason, description string) {
	now := h.deps.Clock.Now()
	h.adjust(func(o *health.Observed) {
		st := &o.Etcd.Status
		runID := string(uuid.NewUUID())
		if c := druidv1alpha1.FindCondition(st.Conditions, ConditionTypeQuorumLossRecovery); c != nil && st.LastOperation != nil &&
			(c.Status == druidv1alpha1.ConditionTrue || heldAtStep3(c, st.LastOperation)) {
			runID = st.LastOperation.RunID // one recovery, one run ID across its steps, also when it was held at step 3
		}
		st.LastOperation = &druidv1alpha1.LastOperation{Type: druidv1alpha1.LastOperationTypeReconcile, State: state,
			Description: description, RunID: runID, LastUpdateTime: metav1.NewTime(now)}
		st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeQuorumLossRecovery,
			Status: cs, Reason: reason, Message: description}, now)
	})
}

// heldAtStep3 tells whether the condition and lastOperation are those holdRecovery wrote (a recovery in
// progress that waits for a human), not a finished recovery or case 10 without a backup.
func heldAtStep3(c *druidv1alpha1.Condition, op *druidv1alpha1.LastOperation) bool {
	return c.Reason == ReasonManualInterventionRequired && op.State == druidv1alpha1.LastOperationStateError &&
		strings.HasPrefix(op.Description, recoveryProgress(decide.StepSaveSurvivingData, ""))
}

// QuorumLossRecoveryInProgress tells whether the StatefulSet carries the recovery marker; the spec flow
// holds back while it does, because its StatefulSet sync would scale the members back up before their
// pods are gone and their leases recreated.
func QuorumLossRecoveryInProgress(sts *appsv1.StatefulSet) bool {
	return decide.RecoveryPhaseOf(sts) != decide.RecoveryIdle
}

// missingPVCDeletion is Deps.MissingPVCDeletion, nothing when it is not set.
func (h *healRun) missingPVCDeletion(ctx context.Context) ([]permissions.Permission, error) {
	if h.deps.MissingPVCDeletion == nil {
		return nil, nil
	}
	return h.deps.MissingPVCDeletion(ctx)
}
