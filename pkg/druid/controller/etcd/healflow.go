package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/healing"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// healRun is one heal flow: it applies seed 002's decision table (package healing) to what the status
// flow observed and computed, drives the actions that take more than a status write, and writes what they
// change in the status. Its steps: act on the decisions → write the status the actions changed → scale
// back a quorum-loss recovery whose status is written (step 6/6) → toggle the PodDisruptionBudget when its
// minAvailable changed with the health → report failed actions or requeues.
//
// The StatefulSet and the member leases are written only through their operators (statefulset.Scaler,
// memberlease.Healer); pods and PVCs, which no operator owns, are deleted here.
type healRun struct {
	r *Reconciler
	// etcd is the Etcd as stored after the status flow's write; every write of the heal flow starts from it.
	etcd *druidv1alpha1.Etcd
	// input is what the decisions are taken on: the status flow's observation (with the status stored
	// before its write) and the status it computed.
	input healing.Input
	// before is the defaulted Etcd as stored before this reconcile's status writes (PodDisruptionBudget toggle).
	before *druidv1alpha1.Etcd
	// outcome is what the actions changed; the later steps act on it.
	outcome healOutcome
}

// healOutcome collects what the actions of one heal flow did, for the steps after them.
type healOutcome struct {
	// observed is the picture the status must be computed from after the actions: the status flow's
	// observation, changed by adjust (cleared members, deleted or recreated leases, clusterSize,
	// lastOperation, the QuorumLossRecovery condition).
	observed health.Observed
	// statusChanged tells whether an action changed observed, i.e. whether the status must be written again.
	statusChanged bool
	// scaleBackTo is set by step 5 of the quorum-loss recovery: step 6 scales back to it after the write.
	scaleBackTo *int32
	// recoveryHeldBack is the QuorumLossRecovery reason of a recovery in progress that stopped for a human
	// (step 3), so that the condition is kept rather than cleared as a situation that is gone.
	recoveryHeldBack string
	errs             []error
	// requeueAfter and requeueReason are the earliest requeue an action asked for.
	requeueAfter  time.Duration
	requeueReason string
}

func (r *Reconciler) newHealRun(etcd *druidv1alpha1.Etcd, status *statusRun) *healRun {
	observed := status.observed
	observed.Etcd = status.observed.Etcd.DeepCopy() // the actions adjust it; the status flow's copy stays as read
	return &healRun{r: r, etcd: etcd, before: status.observed.Etcd,
		input:   healing.Input{Observed: status.observed, Computed: status.computed, Thresholds: r.thresholds(), Now: status.now},
		outcome: healOutcome{observed: observed}}
}

func (h *healRun) steps() []flow.Step {
	return []flow.Step{
		{Name: "act", Run: h.act},
		{Name: "writeStatus", Run: h.writeStatus},
		{Name: "finishQuorumLossRecovery", Run: h.finishQuorumLossRecovery},
		{Name: "togglePodDisruptionBudget", Run: h.togglePodDisruptionBudget},
		{Name: "report", Run: h.report},
	}
}

// act takes the decisions and applies each action. A failed action does not keep the others or the
// status write from running: its error is reported by the last step.
func (h *healRun) act(ctx context.Context) flow.Result {
	heldBack := ""
	for _, a := range healing.Decide(h.input) {
		logger := log.FromContext(ctx).WithValues("case", int(a.Case), "action", a.Kind)
		actionCtx := log.IntoContext(ctx, logger)
		var err error
		switch a.Kind {
		case healing.KindDeletePods:
			err = h.deleteNotReadyMemberPods(actionCtx)
		case healing.KindStartQuorumRecovery:
			err = h.startQuorumLossRecovery(actionCtx)
		case healing.KindContinueQuorumRecovery:
			err = h.continueQuorumLossRecovery(actionCtx, a)
		case healing.KindManualInterventionRequired:
			heldBack = ReasonManualInterventionRequired
			h.reportRecoveryHeldBack(actionCtx, a, ReasonManualInterventionRequired, EventReasonManualInterventionRequired)
		case healing.KindLeaseRenewalSuspected:
			heldBack = ReasonLeaseRenewalSuspected
			h.reportRecoveryHeldBack(actionCtx, a, ReasonLeaseRenewalSuspected, EventReasonLeaseRenewalSuspected)
		case healing.KindCompleteScaleDown:
			err = h.completeScaleDown(actionCtx, a)
		case healing.KindRemoveSuperfluousMembers:
			err = h.removeSuperfluousMembers(actionCtx, a)
		default: // answered by the status write (cases 2–8) or by the spec flow (case 11)
			logger.V(1).Info(a.Message, "members", a.Members)
		}
		if err != nil {
			h.outcome.errs = append(h.outcome.errs, fmt.Errorf("decision table case %d (%s): %w", a.Case, a.Kind, err))
		}
	}
	if h.outcome.recoveryHeldBack != "" {
		heldBack = h.outcome.recoveryHeldBack
	}
	h.clearRecoveryHeldBack(heldBack)
	return flow.Continue()
}

// adjust changes the picture the status is computed from, for the heal flow's status write.
func (h *healRun) adjust(change func(o *health.Observed)) {
	change(&h.outcome.observed)
	h.outcome.statusChanged = true
}

// writeStatus writes the status again when an action changed what it must say.
func (h *healRun) writeStatus(ctx context.Context) flow.Result {
	if !h.outcome.statusChanged {
		return flow.Continue()
	}
	now := h.r.clock.Now()
	computed := health.ComputeStatus(h.outcome.observed, h.r.thresholds(), now)
	return flowResultOf(h.r.writeComputedStatus(ctx, h.etcd, nil, computed, now))
}

// report ends the heal flow with the actions' errors, or with the requeue an action asked for (e.g.
// polling for pods to terminate).
func (h *healRun) report(context.Context) flow.Result {
	if err := errors.Join(h.outcome.errs...); err != nil {
		return flow.Fail(err)
	}
	if h.outcome.requeueAfter > 0 {
		return flow.RequeueAfter(h.outcome.requeueAfter, h.outcome.requeueReason)
	}
	return flow.Continue()
}

func (h *healRun) requeue(after time.Duration, reason string) {
	if h.outcome.requeueAfter == 0 || after < h.outcome.requeueAfter {
		h.outcome.requeueAfter, h.outcome.requeueReason = after, reason
	}
}

// statefulSets is the StatefulSet operator's scaling part; memberLeases the member Lease operator's healing part.
func (r *Reconciler) statefulSets() statefulset.Scaler {
	return r.registry.Get(component.KindStatefulSet).(statefulset.Scaler)
}

// plannedStatefulSets is the StatefulSet operator's part the spec flow syncs through.
func (r *Reconciler) plannedStatefulSets() statefulset.PlannedSyncer {
	return r.registry.Get(component.KindStatefulSet).(statefulset.PlannedSyncer)
}

func (r *Reconciler) memberLeases() memberlease.Healer {
	return r.registry.Get(component.KindMemberLease).(memberlease.Healer)
}
