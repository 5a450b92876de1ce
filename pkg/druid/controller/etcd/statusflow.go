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

// statusRun is one status flow: observe → compute → write. It has no effect but the status write; what
// the observation asks druid to do about the cluster is the heal flow's (healflow.go), which runs on the
// same observation afterwards.
type statusRun struct {
	r    *Reconciler
	etcd *druidv1alpha1.Etcd
	// observed is what the status is derived from; its Etcd carries the status as stored before the write.
	observed health.Observed
	computed druidv1alpha1.EtcdStatus
	now      time.Time
}

func (r *Reconciler) newStatusRun(etcd *druidv1alpha1.Etcd) *statusRun {
	return &statusRun{r: r, etcd: etcd}
}

// steps are the status flow: read the StatefulSet, pods, leases and PVC warnings; derive members,
// conditions and replica counts (package health); write the status when it changed.
func (s *statusRun) steps() []flow.Step {
	return []flow.Step{
		{Name: "observe", Run: s.observe},
		{Name: "compute", Run: s.compute},
		{Name: "writeStatus", Run: s.write},
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

func (s *statusRun) compute(context.Context) flow.Result {
	s.now = s.r.clock.Now()
	s.computed = health.ComputeStatus(s.observed, s.r.thresholds(), s.now)
	return flow.Continue()
}

func (s *statusRun) write(ctx context.Context) flow.Result {
	return flowResultOf(s.r.writeComputedStatus(ctx, s.etcd, s.computed, s.now))
}

// writeComputedStatus writes computed as etcd's status unless it differs from the stored one only in
// heartbeats that are not due yet. The status and heal flows write through it.
func (r *Reconciler) writeComputedStatus(ctx context.Context, etcd *druidv1alpha1.Etcd, computed druidv1alpha1.EtcdStatus, now time.Time) error {
	if onlyHeartbeatsDiffer(etcd.Status, computed, now, heartbeatPeriods*r.config.StatusSyncPeriod) {
		return nil
	}
	logStatusChanges(ctx, etcd.Status, computed)
	return r.patchStatus(ctx, etcd, func(st *druidv1alpha1.EtcdStatus) { *st = computed })
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
