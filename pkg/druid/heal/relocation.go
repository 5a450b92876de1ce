package heal

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/permissions"
)

// The member relocation (the decision table's case 14, decide/relocation.go): the claim and pod of a member
// whose volume is bound to lost nodes are deleted, so that the StatefulSet creates both anew on a live
// node. The new member starts with an empty volume; the sidecar's initializer finds the quorate cluster
// and the member's old identity in it, removes that identity (MemberRemove) and joins as a learner, which
// is promoted once it caught up (the wiped-member rejoin, package backuprestore/initializer). Every
// acknowledged write is on the quorum of the other members, which Decide requires Ready.
//
// Why the claim goes before the pod: the StatefulSet recreates a deleted pod at once, and a pod created
// while the old claim still exists would be bound to it again. A claim deleted first stays (terminating,
// behind the volume protection finalizer) only as long as a scheduled pod uses it; the pod deleted next
// is recreated with a new claim, or, when the old claim is still terminating then, the StatefulSet
// controller creates the missing claim for the Pending pod once it is gone.

// relocateMember is KindRelocateMember and KindRelocationHeld: judge the candidate's volume on what the
// apiserver stores, and relocate the member (or say why not) when the volume is unreachable.
func (h *healRun) relocateMember(ctx context.Context, a decide.Action) error {
	logger := log.FromContext(ctx)
	member := a.Members[0]
	pods := h.input.Observed.Pods
	if a.Kind == decide.KindRelocateMember {
		fresh, freshPods, confirmed, err := h.confirmFromAPIServer(ctx, decide.KindRelocateMember)
		if err != nil {
			return err
		}
		if !confirmed || fresh.Members[0] != member {
			logger.V(1).Info("Member relocation not confirmed by the apiserver's leases and pods", "member", member)
			return nil
		}
		pods = freshPods
	}
	if missing, err := h.missingRelocationPermissions(ctx); err != nil || len(missing) > 0 {
		if err != nil {
			return err
		}
		h.reportRelocationHeld(ctx, member, decide.ReasonRelocationPermissionsMissing, fmt.Sprintf(
			"member NotReady with a pod that does not run; judging whether its volume is lost and replacing the member needs permission to %s, which druid's role does not grant: nothing was changed",
			permissions.Join(missing)))
		return nil
	}
	etcd := h.input.Observed.Etcd
	ordinal, _ := druidv1alpha1.OrdinalOf(etcd, member)
	pod := pods[druidv1alpha1.PodName(etcd, ordinal)]
	placement, err := h.readPlacement(ctx, ordinal, pod)
	if err != nil {
		return err
	}
	verdict := decide.JudgeRelocation(placement)
	if !verdict.Unreachable {
		h.continueRelocation(ctx, member, placement)
		logger.V(1).Info("Member volume not lost: no relocation", "member", member, "why", verdict.Why)
		return nil
	}
	if a.Kind == decide.KindRelocationHeld {
		h.reportRelocationHeld(ctx, member, decide.ReasonMemberRelocationHeld, verdict.Why+"; not relocated: "+a.Message)
		return nil
	}
	return h.deleteClaimAndPod(ctx, member, placement, verdict, a.Message)
}

// readPlacement reads the member's claim, its volume and the Nodes from the apiserver (not the cache:
// druid watches neither volumes nor nodes, and a claim is deleted only on what is stored).
func (h *healRun) readPlacement(ctx context.Context, ordinal int, pod *corev1.Pod) (decide.Placement, error) {
	etcd, sts := h.input.Observed.Etcd, h.input.Observed.StatefulSet
	p := decide.Placement{Pod: pod, Now: h.deps.Clock.Now(), UnreachableGrace: h.deps.Config.NodeUnreachableGrace}
	// The StatefulSet's own claim template names the claims: an adopted one may keep another name than the
	// Etcd asks for.
	template := druidv1alpha1.VolumeClaimTemplateName(etcd)
	if len(sts.Spec.VolumeClaimTemplates) == 1 {
		template = sts.Spec.VolumeClaimTemplates[0].Name
	}
	name := fmt.Sprintf("%s-%s-%d", template, sts.Name, ordinal)
	claim := &corev1.PersistentVolumeClaim{}
	switch err := h.deps.Reader.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: name}, claim); {
	case apierrors.IsNotFound(err):
		return p, nil
	case err != nil:
		return p, fmt.Errorf("reading claim %s: %w", name, err)
	}
	p.Claim = claim
	nodes := &corev1.NodeList{}
	if err := h.deps.Reader.List(ctx, nodes); err != nil {
		return p, fmt.Errorf("listing nodes: %w", err)
	}
	p.Nodes = nodes.Items
	if claim.Spec.VolumeName == "" {
		return p, nil
	}
	pv := &corev1.PersistentVolume{}
	switch err := h.deps.Reader.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return p, fmt.Errorf("reading volume %s of claim %s: %w", claim.Spec.VolumeName, name, err)
	default:
		p.Volume = pv
	}
	return p, nil
}

// deleteClaimAndPod relocates: the claim (UID precondition: a claim created meanwhile is not judged yet),
// then the pod (UID precondition; without a grace period when it is bound to a lost node, whose kubelet
// never confirms a graceful deletion). The MemberRelocation condition turns True.
func (h *healRun) deleteClaimAndPod(ctx context.Context, member string, p decide.Placement, v decide.Verdict, quorum string) error {
	logger := log.FromContext(ctx)
	err := h.deps.Client.Delete(ctx, p.Claim, client.Preconditions{UID: ptr.To(p.Claim.UID)})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone or replaced meanwhile: the next run judges what is there
	}
	if err != nil {
		return fmt.Errorf("deleting claim %s of member %s: %w", p.Claim.Name, member, err)
	}
	logger.Info("Relocating a member whose volume is lost: deleted its claim", "member", member, "claim", p.Claim.Name, "why", v.Why)
	what := fmt.Sprintf("%s (%s); deleted claim %s", v.Why, quorum, p.Claim.Name)
	if p.Pod != nil {
		if err := h.deleteRelocatedPod(ctx, p.Pod, v.ForceDeletePod); err != nil {
			h.recordRelocation(druidv1alpha1.ConditionTrue, decide.ReasonMemberRelocating, member, what)
			return err
		}
		what += fmt.Sprintf(" and pod %s", p.Pod.Name)
		if v.ForceDeletePod {
			what += " (forced: its node is lost)"
		}
	}
	what += "; the StatefulSet creates them on a live node and the new member rejoins the cluster as a learner"
	h.deps.Recorder.Eventf(h.etcd, p.Claim, "Warning", decide.ReasonMemberRelocating, "RelocateMember", "%s: %s", member, what)
	h.recordRelocation(druidv1alpha1.ConditionTrue, decide.ReasonMemberRelocating, member, what)
	return nil
}

// continueRelocation deletes the pod of the relocating member again when it still refers to the claim
// deleted by the relocation (the pod deletion after the claim's failed, or druid stopped in between):
// otherwise a pod bound to a lost node keeps the old claim terminating for ever.
func (h *healRun) continueRelocation(ctx context.Context, member string, p decide.Placement) {
	if decide.RelocatingMember(h.input.Observed.Etcd.Status) != member || p.Claim == nil || p.Claim.DeletionTimestamp == nil ||
		p.Pod == nil || !p.Pod.CreationTimestamp.Before(p.Claim.DeletionTimestamp) {
		return
	}
	force := p.Pod.Spec.NodeName != ""
	for _, n := range p.Nodes {
		if n.Name == p.Pod.Spec.NodeName {
			force = false // a node that is there confirms the deletion itself
		}
	}
	if err := h.deleteRelocatedPod(ctx, p.Pod, force); err != nil {
		h.outcome.Errs = append(h.outcome.Errs, err)
		return
	}
	log.FromContext(ctx).Info("Relocation continued: deleted the pod still using the deleted claim", "member", member, "pod", p.Pod.Name)
}

func (h *healRun) deleteRelocatedPod(ctx context.Context, pod *corev1.Pod, force bool) error {
	opts := []client.DeleteOption{client.Preconditions{UID: ptr.To(pod.UID)}}
	if force {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	err := h.deps.Client.Delete(ctx, pod, opts...)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s of the relocated member: %w", pod.Name, err)
	}
	return nil
}

// reportMemberRelocated is KindMemberRelocated: the replacement is Ready.
func (h *healRun) reportMemberRelocated(ctx context.Context, a decide.Action) {
	member := a.Members[0]
	log.FromContext(ctx).Info("Member relocated: its replacement is Ready", "member", member)
	h.deps.Recorder.Eventf(h.etcd, nil, "Normal", decide.ReasonMemberRelocated, "RelocateMember", "%s", a.Message)
	h.recordRelocation(druidv1alpha1.ConditionFalse, decide.ReasonMemberRelocated, member, "the replacement member is Ready")
}

// reportRelocationHeld says in the MemberRelocation condition why a member whose volume is lost is not
// relocated, with a Warning event when the reason is new. A relocation in progress is not overwritten,
// not even by the relocating member's own: its condition is what keeps every other member from being
// relocated until it is Ready (one member at a time).
func (h *healRun) reportRelocationHeld(ctx context.Context, member, reason, why string) {
	h.outcome.relocationHeld = true
	status := h.outcome.Observed.Etcd.Status
	if decide.RelocatingMember(status) != "" {
		log.FromContext(ctx).V(1).Info("Member relocation held back while a relocation is under way", "member", member, "reason", reason, "why", why)
		return
	}
	c := druidv1alpha1.FindCondition(status.Conditions, decide.ConditionTypeMemberRelocation)
	message := member + ": " + why
	if c != nil && c.Reason == reason && c.Message == message {
		return
	}
	if c == nil || c.Reason != reason {
		log.FromContext(ctx).Info("Member relocation held back", "member", member, "reason", reason, "why", why)
		h.deps.Recorder.Eventf(h.etcd, nil, "Warning", reason, "RelocateMember", "%s", message)
	}
	h.recordRelocation(druidv1alpha1.ConditionFalse, reason, member, why)
}

// clearRelocationHeld drops a held-back MemberRelocation condition once no run reports it any more (the
// node came back, the member recovered, the role was extended and the member relocated).
func (h *healRun) clearRelocationHeld() {
	c := druidv1alpha1.FindCondition(h.outcome.Observed.Etcd.Status.Conditions, decide.ConditionTypeMemberRelocation)
	if h.outcome.relocationHeld || c == nil || (c.Reason != decide.ReasonMemberRelocationHeld && c.Reason != decide.ReasonRelocationPermissionsMissing) {
		return
	}
	h.adjust(func(o *health.Observed) {
		o.Etcd.Status.Conditions = health.RemoveCondition(o.Etcd.Status.Conditions, decide.ConditionTypeMemberRelocation)
	})
}

// recordRelocation sets the MemberRelocation condition of the status the heal flow writes next; its
// message starts with the member (decide.RelocatingMember reads it back).
func (h *healRun) recordRelocation(cs druidv1alpha1.ConditionStatus, reason, member, why string) {
	now := h.deps.Clock.Now()
	h.adjust(func(o *health.Observed) {
		o.Etcd.Status.Conditions = health.SetCondition(o.Etcd.Status.Conditions, druidv1alpha1.Condition{Type: decide.ConditionTypeMemberRelocation,
			Status: cs, Reason: reason, Message: member + ": " + why}, now)
	})
}

// missingRelocationPermissions is Deps.MissingRelocationPermissions, nothing when it is not set.
func (h *healRun) missingRelocationPermissions(ctx context.Context) ([]permissions.Permission, error) {
	if h.deps.MissingRelocationPermissions == nil {
		return nil, nil
	}
	return h.deps.MissingRelocationPermissions(ctx)
}
