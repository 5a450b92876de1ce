package etcd

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// healFlow runs package heal on the status flow's observation and writes what its actions changed. Its
// steps: heal (decide and act) → write the status the actions changed → scale back a quorum-loss recovery
// whose completion is written (step 6) → toggle the PodDisruptionBudget when its minAvailable changed with
// the health → report failed actions or requeues.
type healFlow struct {
	r *Reconciler
	// etcd is the Etcd as stored after the status flow's write; every write of the heal flow starts from it.
	etcd  *druidv1alpha1.Etcd
	input heal.Input
	// before is the defaulted Etcd as stored before this reconcile's status writes (PodDisruptionBudget toggle).
	before  *druidv1alpha1.Etcd
	outcome heal.Outcome
}

func (r *Reconciler) newHealFlow(etcd *druidv1alpha1.Etcd, status *statusRun) *healFlow {
	return &healFlow{r: r, etcd: etcd, before: status.observed.Etcd,
		input: heal.Input{Etcd: etcd, Observed: status.observed, Computed: status.computed, Now: status.now}}
}

func (h *healFlow) steps() []flow.Step {
	return []flow.Step{
		{Name: "heal", Run: h.heal},
		{Name: "writeStatus", Run: h.writeStatus},
		{Name: "finishQuorumLossRecovery", Run: h.finishQuorumLossRecovery},
		{Name: "togglePodDisruptionBudget", Run: h.togglePodDisruptionBudget},
		{Name: "report", Run: h.report},
	}
}

// heal decides and acts; a failed action does not keep the status write from running (report ends the
// flow with it).
func (h *healFlow) heal(ctx context.Context) flow.Result {
	h.outcome = heal.Run(ctx, h.r.healDeps(), h.input)
	if h.outcome.RecoveryStarted {
		collector.recoveryStarted(client.ObjectKeyFromObject(h.etcd))
	}
	return flow.Continue()
}

// writeStatus writes the status again when an action changed what it must say.
func (h *healFlow) writeStatus(ctx context.Context) flow.Result {
	if !h.outcome.StatusChanged {
		return flow.Continue()
	}
	now := h.r.clock.Now()
	computed := health.ComputeStatus(h.outcome.Observed, h.r.thresholds(), now)
	if err := h.r.writeComputedStatus(ctx, h.etcd, nil, computed, now); err != nil {
		return flowResultOf(err)
	}
	return flowResultOf(h.r.recordClusterSize(ctx, h.outcome.Observed, computed))
}

func (h *healFlow) finishQuorumLossRecovery(ctx context.Context) flow.Result {
	return flowResultOf(heal.FinishQuorumLossRecovery(ctx, h.r.healDeps(), h.etcd, h.outcome))
}

// report ends the heal flow with the actions' errors, or with the requeue an action asked for (e.g.
// polling for pods to terminate).
func (h *healFlow) report(context.Context) flow.Result {
	if err := errors.Join(h.outcome.Errs...); err != nil {
		return flow.Fail(err)
	}
	if h.outcome.RequeueAfter > 0 {
		return flow.RequeueAfter(h.outcome.RequeueAfter, h.outcome.RequeueReason)
	}
	return flow.Continue()
}

// healDeps are what package heal acts through: the StatefulSet and member Lease operators, so that
// those objects have one writer.
func (r *Reconciler) healDeps() heal.Deps {
	return heal.Deps{Client: r.client, Reader: r.reader, Recorder: r.recorder, Clock: r.clock, Config: r.config, MissingPVCDeletion: r.missingPVCDeletion,
		MissingRelocationPermissions: r.missingRelocationPermissions,
		StatefulSets:                 r.statefulSets(), MemberLeases: r.registry.Get(component.KindMemberLease).(memberlease.Healer)}
}

// statefulSets is the StatefulSet operator's scaling part (heal flow, full snapshot before an update).
func (r *Reconciler) statefulSets() statefulset.Scaler {
	return r.registry.Get(component.KindStatefulSet).(statefulset.Scaler)
}
