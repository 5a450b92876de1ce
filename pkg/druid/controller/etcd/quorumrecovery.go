package etcd

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/healing"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// The quorum-loss recovery (seed 002 case 10) runs over several status flows:
//
//  1. start: scale the StatefulSet to 0 and mark it with healing.QuorumLossRecoveryAnnotation (one write);
//  2. until no member pod exists (read from the apiserver, not the cache): wait;
//  3. delete the members' data volumes (PVCs of the StatefulSet's claim templates) and wait until they are
//     gone: a minority member that kept its data would otherwise restart into the old membership and wait
//     for peers that no longer exist, while the wiped majority waits for it — nobody would restore. What
//     the minority held beyond the last delta snapshot is lost, as seed 002 accepts for case 10;
//  4. delete every member lease and create them again empty, clear status.members and set
//     status.clusterSize to spec.replicas — the members bootstrap a new cluster, and their sidecars restore
//     it from the backup;
//  5. after the status of step 4 is written: scale the StatefulSet back to spec.replicas and remove the
//     marker (one write).
//
// Each step has its own event action, because the events recorder folds events that differ only in their
// message into one series. Each step is idempotent and the marker changes together with the replicas, so a druid that restarts at
// any point resumes at the right step. The spec flow holds back while the marker is set.
const (
	recoveryPhaseWaitingForPods = "waiting-for-pods-to-terminate"
	recoveryPollPeriod          = 2 * time.Second
)

// startQuorumLossRecovery is step 1.
func (s *statusRun) startQuorumLossRecovery(ctx context.Context, a healing.Action) error {
	a, _, confirmed, err := s.confirmFromAPIServer(ctx, healing.KindStartQuorumRecovery)
	if err != nil || !confirmed {
		log.FromContext(ctx).V(1).Info("Quorum loss not confirmed by the apiserver's leases and pods", "error", err)
		return err
	}
	if err := s.scaleStatefulSet(ctx, 0, recoveryPhaseWaitingForPods); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Quorum lost: scaled the StatefulSet to 0 to bootstrap the cluster again from the backup", "members", a.Members)
	s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "ScaleToZero",
		"%s; step 1/3: scaled the StatefulSet to 0", a.Message)
	s.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
		"quorum-loss recovery: scaled the StatefulSet to 0, waiting for the member pods to terminate")
	s.requeue(recoveryPollPeriod, "waiting for the member pods to terminate")
	return nil
}

// continueQuorumLossRecovery drives steps 2 to 4.
func (s *statusRun) continueQuorumLossRecovery(ctx context.Context, a healing.Action) error {
	logger := log.FromContext(ctx)
	// The cache can still show the marker after the previous flow finished the recovery; acting on that
	// would delete the leases the members are already renewing. The stored StatefulSet decides.
	sts := &appsv1.StatefulSet{}
	if err := s.r.reader.Get(ctx, client.ObjectKeyFromObject(s.observed.StatefulSet), sts); err != nil {
		return fmt.Errorf("reading statefulset %s: %w", s.observed.StatefulSet.Name, err)
	}
	if !quorumLossRecoveryInProgress(sts) {
		logger.V(1).Info("Quorum-loss recovery already finished; the cache lags behind")
		s.requeue(recoveryPollPeriod, "the cache lags behind the finished quorum-loss recovery")
		return nil
	}
	s.observed.StatefulSet = sts
	// Step 3 ends with a status write that must not fail on a cached Etcd's stale resourceVersion (step 3
	// would then run again): the flow continues from the stored Etcd.
	if err := s.r.reader.Get(ctx, client.ObjectKeyFromObject(s.etcd), s.etcd); err != nil {
		return fmt.Errorf("reading etcd %s: %w", s.etcd.Name, err)
	}
	s.observed.Etcd = defaulted(s.etcd)
	if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
		if err := s.scaleStatefulSet(ctx, 0, recoveryPhaseWaitingForPods); err != nil {
			return err
		}
	}
	pods := &corev1.PodList{}
	if err := s.r.reader.List(ctx, pods, client.InNamespace(s.etcd.Namespace), client.MatchingLabels(s.etcd.ManagedLabels())); err != nil {
		return fmt.Errorf("listing member pods: %w", err)
	}
	if n := len(pods.Items); n > 0 {
		logger.V(1).Info("Waiting for member pods to terminate", "pods", n)
		s.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
			fmt.Sprintf("quorum-loss recovery: StatefulSet at 0 replicas, waiting for %d member pod(s) to terminate", n))
		s.requeue(recoveryPollPeriod, "waiting for the member pods to terminate")
		return nil
	}

	volumes, err := s.deleteMemberVolumes(ctx, sts)
	if err != nil {
		return err
	}
	if len(volumes) > 0 {
		logger.Info("Waiting for the member data volumes to be deleted", "pvcs", volumes)
		s.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
			fmt.Sprintf("quorum-loss recovery: member pods gone, waiting for %d data volume(s) to be deleted: %s", len(volumes), strings.Join(volumes, ", ")))
		s.requeue(recoveryPollPeriod, "waiting for the member data volumes to be deleted")
		return nil
	}

	leases, err := s.recreateMemberLeases(ctx, a.Replicas)
	if err != nil {
		return err
	}
	st := &s.observed.Etcd.Status
	st.Members = nil
	st.ClusterSize = ptr.To(a.Replicas)
	s.observed.MemberLeases = leases
	logger.Info("Member pods gone: member leases recreated, members cleared", "clusterSize", a.Replicas)
	s.r.recorder.Eventf(s.etcd, nil, "Normal", EventReasonQuorumLossRecovery, "RecreateMemberLeases",
		"step 2/3: member pods and data volumes gone; recreated %d empty member leases, cleared the members, clusterSize %d", len(leases), a.Replicas)
	s.recordRecovery(druidv1alpha1.LastOperationStateSucceeded, druidv1alpha1.ConditionFalse, ReasonRecoveryCompleted,
		fmt.Sprintf("quorum-loss recovery: scaled the StatefulSet back to %d, members bootstrapping from the backup", a.Replicas))
	s.scaleBackTo = ptr.To(a.Replicas)
	return nil
}

// finishQuorumLossRecovery is step 4; the status flow runs it after the status write. Scaling back only
// once the status says the recovery completed keeps the two consistent: if the status write fails (e.g. a
// conflict), the StatefulSet keeps the marker and the next flow repeats step 3, which is idempotent; if
// the StatefulSet write fails, the marker stays too and the next flow repeats steps 3 and 4. Scaling back
// first instead would lose the completion whenever the status write that follows it fails, and leave the
// condition saying "in progress" for good.
func (s *statusRun) finishQuorumLossRecovery(ctx context.Context) flow.Result {
	if s.scaleBackTo == nil {
		return flow.Continue()
	}
	replicas := *s.scaleBackTo
	if err := s.scaleStatefulSet(ctx, replicas, ""); err != nil {
		return flow.Fail(err)
	}
	log.FromContext(ctx).Info("Scaled the StatefulSet back: members bootstrap and restore from the backup", "replicas", replicas)
	s.r.recorder.Eventf(s.etcd, nil, "Normal", EventReasonQuorumLossRecovery, "ScaleBack",
		"step 3/3: scaled the StatefulSet back to %d; the members bootstrap a new cluster and restore it from the backup", replicas)
	return flow.Continue()
}

// scaleStatefulSet writes replicas and the recovery marker (removed when phase is empty) in one patch,
// guarded by the resourceVersion read by the status flow.
func (s *statusRun) scaleStatefulSet(ctx context.Context, replicas int32, phase string) error {
	sts := s.observed.StatefulSet
	base := sts.DeepCopy()
	sts.Spec.Replicas = ptr.To(replicas)
	if phase == "" {
		delete(sts.Annotations, healing.QuorumLossRecoveryAnnotation)
	} else {
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, healing.QuorumLossRecoveryAnnotation, phase)
	}
	if err := s.r.client.Patch(ctx, sts, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("scaling statefulset %s to %d: %w", sts.Name, replicas, err)
	}
	return nil
}

// deleteMemberVolumes deletes the data volume claims of the StatefulSet's members (named
// <claim template>-<statefulset>-<ordinal>, whatever the ordinal) that are not being deleted yet, and
// returns the names of those that still exist, deleting or not. It reads from the apiserver: a cached
// claim that is already gone would hold the recovery back for a poll period.
func (s *statusRun) deleteMemberVolumes(ctx context.Context, sts *appsv1.StatefulSet) ([]string, error) {
	claims := &corev1.PersistentVolumeClaimList{}
	if err := s.r.reader.List(ctx, claims, client.InNamespace(sts.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the member data volumes: %w", err)
	}
	var remaining []string
	for i := range claims.Items {
		claim := &claims.Items[i]
		if !isMemberVolume(sts, claim.Name) {
			continue
		}
		remaining = append(remaining, claim.Name)
		if claim.DeletionTimestamp != nil {
			continue
		}
		if err := s.r.client.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("deleting data volume %s: %w", claim.Name, err)
		}
		log.FromContext(ctx).Info("Deleted a member data volume for the quorum-loss recovery", "pvc", claim.Name)
		s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonQuorumLossRecovery, "DeleteMemberVolume",
			"step 2/3: deleted data volume %s; the cluster is bootstrapped again from the backup", claim.Name)
	}
	return remaining, nil
}

// isMemberVolume tells whether a claim name is one the StatefulSet creates for a member.
func isMemberVolume(sts *appsv1.StatefulSet, name string) bool {
	for _, template := range sts.Spec.VolumeClaimTemplates {
		ordinal, ok := strings.CutPrefix(name, template.Name+"-"+sts.Name+"-")
		if ok && ordinal != "" && strings.Trim(ordinal, "0123456789") == "" {
			return true
		}
	}
	return false
}

// recreateMemberLeases deletes every member lease of the Etcd and creates the leases of ordinals below
// replicas again, empty: no holder, no renewal, so that no member counts as bootstrapped until its sidecar
// renews it. A lease that still exists after the deletion fails the step (it is retried).
func (s *statusRun) recreateMemberLeases(ctx context.Context, replicas int32) ([]coordinationv1.Lease, error) {
	etcd := s.observed.Etcd
	if err := s.r.client.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(etcd.Namespace), memberlease.Selector(etcd)); err != nil {
		return nil, fmt.Errorf("deleting the member leases: %w", err)
	}
	leases := make([]coordinationv1.Lease, 0, replicas)
	for i := 0; i < int(replicas); i++ {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: etcd.MemberLeaseName(i), Namespace: etcd.Namespace}}
		component.ApplyManagedMeta(lease, etcd, druidv1alpha1.ComponentMemberLease)
		if err := s.r.client.Create(ctx, lease); err != nil {
			return nil, fmt.Errorf("creating member lease %s: %w", lease.Name, err)
		}
		leases = append(leases, *lease)
	}
	return leases, nil
}

// recordRecovery puts the recovery's progress into lastOperation and the QuorumLossRecovery condition of
// the status the flow writes next.
func (s *statusRun) recordRecovery(state druidv1alpha1.LastOperationState, cs druidv1alpha1.ConditionStatus, reason, description string) {
	now := s.r.clock.Now()
	st := &s.observed.Etcd.Status
	runID := string(uuid.NewUUID())
	if c := druidv1alpha1.FindCondition(st.Conditions, ConditionTypeQuorumLossRecovery); c != nil && c.Status == druidv1alpha1.ConditionTrue && st.LastOperation != nil {
		runID = st.LastOperation.RunID // one recovery, one run ID across its steps
	}
	st.LastOperation = &druidv1alpha1.LastOperation{Type: druidv1alpha1.LastOperationTypeReconcile, State: state,
		Description: description, RunID: runID, LastUpdateTime: metav1.NewTime(now)}
	st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeQuorumLossRecovery,
		Status: cs, Reason: reason, Message: description}, now)
}

// quorumLossRecoveryInProgress tells whether the StatefulSet carries the recovery marker.
func quorumLossRecoveryInProgress(sts *appsv1.StatefulSet) bool {
	return sts != nil && sts.Annotations[healing.QuorumLossRecoveryAnnotation] != ""
}
