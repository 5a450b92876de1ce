package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/healing"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// heal is the status flow's step between observing and writing: it classifies what was observed into the
// seed 002 decision table (healing.Decide) and applies the actions that take more than a status write.
// Actions that change what the status must say (cleared members, a new cluster size, recreated leases,
// lastOperation, the QuorumLossRecovery condition) adjust s.observed, so that the write step that follows
// records them in the same status write. A failed action does not keep the status from being written:
// the error is reported by the last step of the flow.
func (s *statusRun) heal(ctx context.Context) flow.Result {
	now := s.r.clock.Now()
	th := s.r.thresholds()
	preview := health.ComputeStatus(s.observed, th, now)
	actions := healing.Decide(healing.Input{Observed: s.observed, Computed: preview, Thresholds: th, Now: now})
	manual := false
	var errs []error
	for _, a := range actions {
		logger := log.FromContext(ctx).WithValues("case", int(a.Case), "action", a.Kind)
		actionCtx := log.IntoContext(ctx, logger)
		var err error
		switch a.Kind {
		case healing.KindDeletePods:
			err = s.deleteNotReadyMemberPods(actionCtx, a)
		case healing.KindStartQuorumRecovery:
			err = s.startQuorumLossRecovery(actionCtx, a)
		case healing.KindContinueQuorumRecovery:
			err = s.continueQuorumLossRecovery(actionCtx, a)
		case healing.KindManualInterventionRequired:
			manual = true
			s.reportManualIntervention(actionCtx, a)
		case healing.KindCompleteScaleDown:
			err = s.completeScaleDown(actionCtx, a)
		case healing.KindRemoveSuperfluousMembers:
			err = s.removeSuperfluousMembers(actionCtx, a)
		default: // answered by the status write (cases 2–8) or by the spec flow (case 11)
			logger.V(1).Info(a.Message, "members", a.Members)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("decision table case %d (%s): %w", a.Case, a.Kind, err))
		}
	}
	if !manual {
		s.clearManualIntervention()
	}
	s.healErr = errors.Join(errs...)
	return flow.Continue()
}

// reportHealing ends the status flow with the healing error, or with the requeue a healing step asked for
// (e.g. polling for pods to terminate).
func (s *statusRun) reportHealing(context.Context) flow.Result {
	if s.healErr != nil {
		return flow.Fail(s.healErr)
	}
	if s.requeueAfter > 0 {
		return flow.RequeueAfter(s.requeueAfter, s.requeueReason)
	}
	return flow.Continue()
}

func (s *statusRun) requeue(after time.Duration, reason string) {
	if s.requeueAfter == 0 || after < s.requeueAfter {
		s.requeueAfter, s.requeueReason = after, reason
	}
}

// deleteNotReadyMemberPods is case 9: the pods of a minority of members that stayed NotReady past the
// grace period are deleted (with a UID precondition, so that a replacement created meanwhile survives);
// the StatefulSet recreates them and the members rejoin. One Warning event per pod (the pod is the event's
// related object, so the recorder does not fold the deletions of different pods into one series).
func (s *statusRun) deleteNotReadyMemberPods(ctx context.Context, _ healing.Action) error {
	a, pods, confirmed, err := s.confirmFromAPIServer(ctx, healing.KindDeletePods)
	if err != nil || !confirmed {
		return err
	}
	etcd := s.observed.Etcd
	for _, member := range a.Members {
		ordinal, _ := etcd.OrdinalOf(member)
		pod := pods[etcd.PodName(ordinal)]
		if pod == nil {
			continue
		}
		err := s.r.client.Delete(ctx, pod, client.Preconditions{UID: ptr.To(pod.UID)})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue // gone already, or replaced by a new pod that gets its own grace period
		}
		if err != nil {
			return fmt.Errorf("deleting pod %s of NotReady member %s: %w", pod.Name, member, err)
		}
		log.FromContext(ctx).Info("Deleted the pod of a NotReady member", "member", member, "pod", pod.Name)
		s.r.recorder.Eventf(s.etcd, pod, "Warning", EventReasonMemberPodDeleted, "DeletePod",
			"deleted pod %s: member %s NotReady for longer than %s in a quorate cluster; the StatefulSet recreates it",
			pod.Name, member, s.r.config.EtcdMemberNotReadyThreshold)
	}
	return nil
}

// reportManualIntervention is case 10 without a usable backup: druid does not wipe the members, it says
// so in the QuorumLossRecovery condition and, when that condition is new, in a Warning event.
func (s *statusRun) reportManualIntervention(ctx context.Context, a healing.Action) {
	st := &s.observed.Etcd.Status
	if c := druidv1alpha1.FindCondition(st.Conditions, ConditionTypeQuorumLossRecovery); c == nil || c.Reason != ReasonManualInterventionRequired {
		log.FromContext(ctx).Info("Quorum lost and no usable backup: manual intervention required", "members", a.Members)
		s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonManualInterventionRequired, actionHeal, "%s", a.Message)
	}
	st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeQuorumLossRecovery,
		Status: druidv1alpha1.ConditionFalse, Reason: ReasonManualInterventionRequired, Message: a.Message}, s.r.clock.Now())
}

// clearManualIntervention drops a ManualInterventionRequired condition once the situation is gone (the
// members came back, or someone repaired the cluster).
func (s *statusRun) clearManualIntervention() {
	st := &s.observed.Etcd.Status
	if c := druidv1alpha1.FindCondition(st.Conditions, ConditionTypeQuorumLossRecovery); c != nil && c.Reason == ReasonManualInterventionRequired {
		st.Conditions = health.RemoveCondition(st.Conditions, ConditionTypeQuorumLossRecovery)
	}
}

// completeScaleDown is case 12 after the spec flow lowered the StatefulSet: leases of the removed ordinals
// that are still there are deleted and status.clusterSize becomes spec.replicas. From then on the
// sidecar's backup leader removes the members with ordinal ≥ clusterSize from etcd.
func (s *statusRun) completeScaleDown(ctx context.Context, a healing.Action) error {
	if err := s.deleteMemberLeases(ctx, a.Members); err != nil {
		return err
	}
	from := ptr.Deref(s.observed.Etcd.Status.ClusterSize, 0)
	s.observed.Etcd.Status.ClusterSize = ptr.To(a.Replicas)
	log.FromContext(ctx).Info("Scale-down completed", "from", from, "to", a.Replicas, "deletedLeases", a.Members)
	s.r.recorder.Eventf(s.etcd, nil, "Normal", EventReasonScaledDown, actionHeal,
		"cluster size %d → %d; the backup-restore leader removes the members with ordinal ≥ %d from etcd", from, a.Replicas, a.Replicas)
	return nil
}

// removeSuperfluousMembers is case 13: leases (and so status entries) of ordinals ≥ spec.replicas.
func (s *statusRun) removeSuperfluousMembers(ctx context.Context, a healing.Action) error {
	if err := s.deleteMemberLeases(ctx, a.Members); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Removed superfluous members", "members", a.Members)
	s.r.recorder.Eventf(s.etcd, nil, "Normal", EventReasonSuperfluousMembersRemoved, actionHeal, "%s", a.Message)
	return nil
}

// deleteMemberLeases deletes the named member leases and drops them from what the status is computed from.
func (s *statusRun) deleteMemberLeases(ctx context.Context, names []string) error {
	drop := map[string]bool{}
	for _, name := range names {
		lease := &coordinationv1.Lease{}
		lease.Name, lease.Namespace = name, s.etcd.Namespace
		if err := s.r.client.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting member lease %s: %w", name, err)
		}
		log.FromContext(ctx).V(1).Info("Deleted member lease", "member", name)
		drop[name] = true
	}
	kept := s.observed.MemberLeases[:0:0]
	for _, l := range s.observed.MemberLeases {
		if !drop[l.Name] {
			kept = append(kept, l)
		}
	}
	s.observed.MemberLeases = kept
	return nil
}
