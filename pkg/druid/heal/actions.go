package heal

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// The heal flow's actions other than the quorum-loss recovery (quorumrecovery.go).

// deleteNotReadyMemberPods is case 9: the pods of a minority of members that stayed NotReady past the
// grace period are deleted (with a UID precondition, so that a replacement created meanwhile survives);
// the StatefulSet recreates them and the members rejoin. One Warning event per pod (the pod is the event's
// related object, so the recorder does not fold the deletions of different pods into one series).
func (h *healRun) deleteNotReadyMemberPods(ctx context.Context) error {
	a, pods, confirmed, err := h.confirmFromAPIServer(ctx, decide.KindDeletePods)
	if err != nil || !confirmed {
		return err
	}
	etcd := h.input.Observed.Etcd
	for _, member := range a.Members {
		ordinal, _ := druidv1alpha1.OrdinalOf(etcd, member)
		pod := pods[druidv1alpha1.PodName(etcd, ordinal)]
		if pod == nil {
			continue
		}
		err := h.deps.Client.Delete(ctx, pod, client.Preconditions{UID: ptr.To(pod.UID)})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue // gone already, or replaced by a new pod that gets its own grace period
		}
		if err != nil {
			return fmt.Errorf("deleting pod %s of NotReady member %s: %w", pod.Name, member, err)
		}
		log.FromContext(ctx).Info("Deleted the pod of a NotReady member", "member", member, "pod", pod.Name)
		h.deps.Recorder.Eventf(h.etcd, pod, "Warning", EventReasonMemberPodDeleted, "DeletePod",
			"deleted pod %s: member %s NotReady for longer than %s in a quorate cluster; the StatefulSet recreates it",
			pod.Name, member, h.deps.Config.EtcdMemberNotReadyThreshold)
	}
	return nil
}

// recoveryHeldBackReasons are the QuorumLossRecovery reasons of a case 10 that druid does not act on.
var recoveryHeldBackReasons = []string{ReasonManualInterventionRequired, ReasonLeaseRenewalSuspected}

// reportRecoveryHeldBack is case 10 without a recovery: no usable backup (ManualInterventionRequired), or
// stale leases of members whose etcd may still serve (LeaseRenewalSuspected). Druid does not wipe the
// members; it says why in the QuorumLossRecovery condition and, when that condition is new or changes its
// reason, in a Warning event.
func (h *healRun) reportRecoveryHeldBack(ctx context.Context, a decide.Action, reason, eventReason string) {
	c := druidv1alpha1.FindCondition(h.outcome.Observed.Etcd.Status.Conditions, ConditionTypeQuorumLossRecovery)
	if c == nil || c.Reason != reason {
		log.FromContext(ctx).Info("Quorum-loss recovery held back", "reason", reason, "members", a.Members, "message", a.Message)
		h.deps.Recorder.Eventf(h.etcd, nil, "Warning", eventReason, eventAction, "%s", a.Message)
	}
	if c != nil && c.Status == druidv1alpha1.ConditionFalse && c.Reason == reason && c.Message == a.Message {
		return
	}
	h.adjust(func(o *health.Observed) {
		o.Etcd.Status.Conditions = health.SetCondition(o.Etcd.Status.Conditions, druidv1alpha1.Condition{Type: ConditionTypeQuorumLossRecovery,
			Status: druidv1alpha1.ConditionFalse, Reason: reason, Message: a.Message}, h.deps.Clock.Now())
	})
}

// clearRecoveryHeldBack drops a held-back QuorumLossRecovery condition other than reported once its
// situation is gone (the members came back, or someone repaired the cluster).
func (h *healRun) clearRecoveryHeldBack(reported string) {
	c := druidv1alpha1.FindCondition(h.outcome.Observed.Etcd.Status.Conditions, ConditionTypeQuorumLossRecovery)
	if c == nil || c.Reason == reported {
		return
	}
	for _, reason := range recoveryHeldBackReasons {
		if c.Reason == reason {
			h.adjust(func(o *health.Observed) {
				o.Etcd.Status.Conditions = health.RemoveCondition(o.Etcd.Status.Conditions, ConditionTypeQuorumLossRecovery)
			})
			return
		}
	}
}

// completeScaleDown is case 12 after the spec flow lowered the StatefulSet: leases of the removed ordinals
// that are still there are deleted and status.clusterSize becomes spec.replicas. From then on the
// sidecar's backup leader removes the members with ordinal ≥ clusterSize from etcd.
func (h *healRun) completeScaleDown(ctx context.Context, a decide.Action) error {
	if err := h.deleteMemberLeases(ctx, a.Members); err != nil {
		return err
	}
	from := h.outcome.Observed.ClusterSize
	h.adjust(func(o *health.Observed) { o.ClusterSize = a.Replicas })
	log.FromContext(ctx).Info("Scale-down completed", "from", from, "to", a.Replicas, "deletedLeases", a.Members)
	h.deps.Recorder.Eventf(h.etcd, nil, "Normal", EventReasonScaledDown, eventAction,
		"cluster size %d → %d; the backup-restore leader removes the members with ordinal ≥ %d from etcd", from, a.Replicas, a.Replicas)
	return nil
}

// removeSuperfluousMembers is case 13: leases (and so status entries) of ordinals ≥ spec.replicas.
func (h *healRun) removeSuperfluousMembers(ctx context.Context, a decide.Action) error {
	if err := h.deleteMemberLeases(ctx, a.Members); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Removed superfluous members", "members", a.Members)
	h.deps.Recorder.Eventf(h.etcd, nil, "Normal", EventReasonSuperfluousMembersRemoved, eventAction, "%s", a.Message)
	return nil
}

// deleteMemberLeases deletes the named member leases through their operator and drops them from what the
// status is computed from.
func (h *healRun) deleteMemberLeases(ctx context.Context, names []string) error {
	if err := h.deps.MemberLeases.DeleteMembers(ctx, h.etcd, names); err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, name := range names {
		drop[name] = true
	}
	h.adjust(func(o *health.Observed) {
		kept := o.MemberLeases[:0:0]
		for _, l := range o.MemberLeases {
			if !drop[l.Name] {
				kept = append(kept, l)
			}
		}
		o.MemberLeases = kept
	})
	return nil
}
