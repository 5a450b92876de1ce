package etcd

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// heartbeatPeriods: the status is rewritten at least every this many status sync periods even when nothing
// but the conditions' lastUpdateTime would change.
const heartbeatPeriods = 4

// statusRun is the state of one status flow.
type statusRun struct {
	r        *Reconciler
	etcd     *druidv1alpha1.Etcd
	observed health.Observed
	// before is the stored Etcd before this flow's status write (for the PodDisruptionBudget toggle).
	before *druidv1alpha1.Etcd
	// healErr and the requeue are what the healing step reports once the status is written.
	healErr error
	// scaleBackTo is set by the quorum-loss recovery's step 3: the replicas step 4 restores after the write.
	scaleBackTo   *int32
	requeueAfter  time.Duration
	requeueReason string
}

// statusSteps is the status flow (the custodian): observe → heal (decision table) → compute and write →
// finish a quorum-loss recovery → toggle the PodDisruptionBudget → report healing errors or requeues.
func (r *Reconciler) statusSteps(etcd *druidv1alpha1.Etcd) []flow.Step {
	run := &statusRun{r: r, etcd: etcd}
	return []flow.Step{
		{Name: "observe", Run: run.observe},
		{Name: "heal", Run: run.heal},
		{Name: "writeStatus", Run: run.write},
		{Name: "finishQuorumLossRecovery", Run: run.finishQuorumLossRecovery},
		{Name: "togglePodDisruptionBudget", Run: run.togglePodDisruptionBudget},
		{Name: "reportHealing", Run: run.reportHealing},
	}
}

func (s *statusRun) observe(ctx context.Context) flow.Result {
	observed, err := s.r.Observe(ctx, s.etcd)
	if err != nil {
		return flow.Fail(err)
	}
	s.observed = observed
	return flow.Continue()
}

func (s *statusRun) write(ctx context.Context) flow.Result {
	now := s.r.clock.Now()
	computed := health.ComputeStatus(s.observed, s.r.thresholds(), now)
	if onlyHeartbeatsDiffer(s.etcd.Status, computed, now, heartbeatPeriods*s.r.config.StatusSyncPeriod) {
		return flow.Continue()
	}
	logStatusChanges(ctx, s.etcd.Status, computed)
	s.before = s.etcd.DeepCopy()
	if err := s.r.patchStatus(ctx, s.etcd, func(st *druidv1alpha1.EtcdStatus) { *st = computed }); err != nil {
		return flow.Fail(err)
	}
	return flow.Continue()
}

// logStatusChanges logs member and condition transitions, the facts an operator looks for in druid's log.
func logStatusChanges(ctx context.Context, old, updated druidv1alpha1.EtcdStatus) {
	logger := log.FromContext(ctx)
	before := map[string]druidv1alpha1.EtcdMemberConditionStatus{}
	for _, m := range old.Members {
		before[m.Name] = m.Status
	}
	for _, m := range updated.Members {
		if prev, ok := before[m.Name]; !ok || prev != m.Status {
			logger.Info("Member status changed", "member", m.Name, "from", prev, "to", m.Status, "reason", m.Reason)
		}
	}
	for _, c := range updated.Conditions {
		if prev := druidv1alpha1.FindCondition(old.Conditions, c.Type); prev == nil || prev.Status != c.Status {
			logger.Info("Condition changed", "condition", c.Type, "status", c.Status, "reason", c.Reason, "message", c.Message)
		}
	}
}
