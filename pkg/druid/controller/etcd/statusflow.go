package etcd

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
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
	// held is what the spec flow of the same reconcile held for this write (its success).
	held *heldStatus
	// synced is the StatefulSet as that spec flow wrote it (nil without one), for a cache that lags.
	synced *appsv1.StatefulSet
}

// newStatusRun starts a status flow after spec, the spec run of the same reconcile (nil without one).
func (r *Reconciler) newStatusRun(etcd *druidv1alpha1.Etcd, held *heldStatus, spec *specRun) *statusRun {
	s := &statusRun{r: r, etcd: etcd, held: held}
	if spec != nil {
		s.synced = spec.synced.StatefulSet
	}
	return s
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
	observed, err := s.r.Observe(ctx, s.etcd, s.synced)
	if err != nil {
		return flow.Fail(err)
	}
	s.observed = observed
	return flow.Continue()
}

func (s *statusRun) compute(context.Context) flow.Result {
	s.now = s.r.clock.Now()
	s.computed = health.ComputeStatus(s.observed, s.r.thresholds(), s.now)
	s.recordAlarmTransition()
	return flow.Continue()
}

// recordAlarmTransition writes an event when the EtcdAlarm condition changes its reason: a Warning when an
// alarm appears (or the NOSPACE recovery gives up), a Normal one when it is gone.
func (s *statusRun) recordAlarmTransition() {
	t := druidv1alpha1.ConditionTypeEtcdAlarm
	before, after := druidv1alpha1.FindCondition(s.etcd.Status.Conditions, t), druidv1alpha1.FindCondition(s.computed.Conditions, t)
	if after == nil || (before != nil && before.Reason == after.Reason) || (before == nil && after.Status == druidv1alpha1.ConditionFalse) {
		return
	}
	eventType := corev1.EventTypeWarning
	if after.Status == druidv1alpha1.ConditionFalse {
		eventType = corev1.EventTypeNormal
	}
	s.r.recorder.Eventf(s.etcd, nil, eventType, EventReasonEtcdAlarm, actionReconcile, "%s: %s", after.Reason, after.Message)
}

func (s *statusRun) write(ctx context.Context) flow.Result {
	if err := s.r.writeComputedStatus(ctx, s.etcd, s.held, s.computed, s.now); err != nil {
		return flowResultOf(err)
	}
	return flowResultOf(s.r.recordClusterSize(ctx, s.observed, s.computed))
}

// recordClusterSize writes the cluster size that follows from computed (health.NextClusterSize) into the
// StatefulSet's ClusterSizeAnnotation when it says something else. The write is guarded by the
// StatefulSet's resourceVersion, so that it never undoes a newer write of the spec flow; a conflict fails
// the run, and the next one records the size. The observed StatefulSet is updated in place with the stored
// object, so that later writes of the same run (the quorum-loss recovery's scale back) build on it.
func (r *Reconciler) recordClusterSize(ctx context.Context, observed health.Observed, computed druidv1alpha1.EtcdStatus) error {
	sts := observed.StatefulSet
	marker := health.ClusterSizeMarker(sts, health.NextClusterSize(observed, computed))
	if marker == nil {
		return nil
	}
	log.FromContext(ctx).Info("Recording the cluster size", "from", observed.ClusterSize, "to", marker[druidv1alpha1.ClusterSizeAnnotation])
	return r.statefulSets().ScaleWithMarkers(ctx, sts, ptr.Deref(sts.Spec.Replicas, 1), marker)
}

// writeComputedStatus writes computed as etcd's status unless it differs from the stored one only in
// heartbeats that are not due yet; a status held by the spec flow is always written (computed starts from
// etcd's status, which holds it). The status and heal flows write through it.
func (r *Reconciler) writeComputedStatus(ctx context.Context, etcd *druidv1alpha1.Etcd, held *heldStatus, computed druidv1alpha1.EtcdStatus, now time.Time) error {
	if !held.pending() && onlyHeartbeatsDiffer(etcd.Status, computed, now, heartbeatPeriods*r.config.StatusSyncPeriod) {
		return nil
	}
	logStatusChanges(ctx, etcd.Status, computed)
	return r.patchStatus(ctx, etcd, held, func(st *druidv1alpha1.EtcdStatus) { *st = computed })
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
