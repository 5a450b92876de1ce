package heal

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/permissions"
)

// Deps are what the heal flow acts through. The StatefulSet and the member leases are written only
// through their operators; pods, PVCs and the surviving-data Jobs, which no operator owns, through Client.
type Deps struct {
	// Client writes and reads from druid's cache.
	Client client.Client
	// Reader reads from the apiserver: destructive actions are confirmed on what is stored, not cached.
	Reader       client.Reader
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	StatefulSets statefulset.Scaler
	MemberLeases memberlease.Healer
	// MissingPVCDeletion asks the apiserver, when a confirmed quorum loss is about to start the recovery,
	// which of the permissions it needs (deleting PersistentVolumeClaims) druid's role does not grant; with
	// any, the recovery does not start. Asked then rather than once at start-up, so that a role extended
	// after the refusal, or an authorizer that could not decide at start-up, takes effect without a
	// restart. nil: nothing is missing.
	MissingPVCDeletion func(ctx context.Context) ([]permissions.Permission, error)
	// MissingRelocationPermissions asks the apiserver, each time a member's volume is to be judged for a
	// relocation, which of permissions.MemberRelocation druid's role does not grant; with any, druid
	// relocates nothing and says so in the MemberRelocation condition. nil: nothing is missing.
	MissingRelocationPermissions func(ctx context.Context) ([]permissions.Permission, error)
	// Config gives the member grace periods, the node unreachable grace of the member relocation, the backup-restore image of the surviving-data Jobs and the
	// node directories a Local backup store mounts.
	Config config.EtcdController
}

// thresholds are the member grace periods of the configuration.
func (d Deps) thresholds() health.Thresholds {
	return health.Thresholds{Unknown: d.Config.EtcdMemberUnknownThreshold, NotReady: d.Config.EtcdMemberNotReadyThreshold}
}

// Input is what one heal run decides on.
type Input struct {
	// Etcd is the Etcd as stored; the run's events name it. A quorum-loss recovery refreshes it in place
	// from the apiserver, so that the status write that follows the run does not fail on a stale
	// resourceVersion (step 5 would then run again).
	Etcd *druidv1alpha1.Etcd
	// Observed is the status flow's observation (its Etcd carries the status as stored before the
	// status write) and Computed the status derived from it.
	Observed health.Observed
	Computed druidv1alpha1.EtcdStatus
	Now      time.Time
}

// Outcome is what one heal run did, for the status write and the steps after it.
type Outcome struct {
	// Observed is the picture the status must be computed from after the actions: the status flow's
	// observation, changed by the actions (cleared members, deleted or recreated leases, clusterSize,
	// lastOperation, the QuorumLossRecovery condition).
	Observed health.Observed
	// StatusChanged tells whether an action changed Observed, i.e. whether the status must be written again.
	StatusChanged bool
	// ScaleBackTo is set by step 5 of the quorum-loss recovery: FinishQuorumLossRecovery (step 6) scales
	// back to it once the status saying so is written.
	ScaleBackTo *int32
	// RecoveryStarted tells that step 1 of a quorum-loss recovery ran (for the recoveries metric).
	RecoveryStarted bool
	// Errs are the failed actions; the others ran regardless.
	Errs []error
	// RequeueAfter and RequeueReason are the earliest requeue an action asked for (0: none).
	RequeueAfter  time.Duration
	RequeueReason string
	// relocationHeld tells that this run reported a member relocation held back, so that the condition
	// saying so is kept rather than cleared as a situation that is gone.
	relocationHeld bool
	// recoveryHeldBack is the QuorumLossRecovery reason of a recovery in progress that stopped for a human
	// (step 3), so that the condition is kept rather than cleared as a situation that is gone.
	recoveryHeldBack string
}

// healRun is one heal run: the decisions on in and the outcome of their actions.
type healRun struct {
	deps Deps
	// etcd is Input.Etcd, which every write and event of the run names.
	etcd    *druidv1alpha1.Etcd
	input   decide.Input
	outcome Outcome
}

// Run applies the decision table (package decide) to what the status flow observed and computed, drives
// the actions that take more than a status write, and returns what they changed. A failed action does
// not keep the others from running: its error is in Outcome.Errs.
func Run(ctx context.Context, deps Deps, in Input) Outcome {
	observed := in.Observed
	observed.Etcd = in.Observed.Etcd.DeepCopy() // the actions adjust it; the status flow's copy stays as read
	h := &healRun{deps: deps, etcd: in.Etcd,
		input:   decide.Input{Observed: in.Observed, Computed: in.Computed, Thresholds: deps.thresholds(), Now: in.Now},
		outcome: Outcome{Observed: observed}}
	h.act(ctx)
	return h.outcome
}

// act takes the decisions and applies each action.
func (h *healRun) act(ctx context.Context) {
	heldBack := ""
	for _, a := range decide.Decide(h.input) {
		logger := log.FromContext(ctx).WithValues("case", int(a.Case), "action", a.Kind)
		actionCtx := log.IntoContext(ctx, logger)
		var err error
		switch a.Kind {
		case decide.KindDeletePods:
			err = h.deleteNotReadyMemberPods(actionCtx)
		case decide.KindStartQuorumRecovery:
			err = h.startQuorumLossRecovery(actionCtx)
		case decide.KindContinueQuorumRecovery:
			err = h.continueQuorumLossRecovery(actionCtx, a)
		case decide.KindManualInterventionRequired:
			heldBack = ReasonManualInterventionRequired
			h.reportRecoveryHeldBack(actionCtx, a, ReasonManualInterventionRequired, EventReasonManualInterventionRequired)
		case decide.KindLeaseRenewalSuspected:
			heldBack = ReasonLeaseRenewalSuspected
			h.reportRecoveryHeldBack(actionCtx, a, ReasonLeaseRenewalSuspected, EventReasonLeaseRenewalSuspected)
		case decide.KindCompleteScaleDown:
			err = h.completeScaleDown(actionCtx, a)
		case decide.KindRemoveSuperfluousMembers:
			err = h.removeSuperfluousMembers(actionCtx, a)
		case decide.KindRelocateMember, decide.KindRelocationHeld:
			err = h.relocateMember(actionCtx, a)
		case decide.KindMemberRelocated:
			h.reportMemberRelocated(actionCtx, a)
		default: // answered by the status write (cases 2–8) or by the spec flow (case 11)
			logger.V(1).Info(a.Message, "members", a.Members)
		}
		if err != nil {
			h.outcome.Errs = append(h.outcome.Errs, fmt.Errorf("decision table case %d (%s): %w", a.Case, a.Kind, err))
		}
	}
	if h.outcome.recoveryHeldBack != "" {
		heldBack = h.outcome.recoveryHeldBack
	}
	h.clearRecoveryHeldBack(heldBack)
	h.clearRelocationHeld()
}

// adjust changes the picture the status is computed from, for the status write after the run.
func (h *healRun) adjust(change func(o *health.Observed)) {
	change(&h.outcome.Observed)
	h.outcome.StatusChanged = true
}

func (h *healRun) requeue(after time.Duration, reason string) {
	if h.outcome.RequeueAfter == 0 || after < h.outcome.RequeueAfter {
		h.outcome.RequeueAfter, h.outcome.RequeueReason = after, reason
	}
}
