package etcd

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
)

// existingStatefulSet reads the Etcd's StatefulSet from the cache and, on a miss, from the apiserver (one a
// upstream druid created may lack the label the cache selects on, and the rolling-update gate must see
// it); nil when it does not exist.
func (s *specRun) existingStatefulSet(ctx context.Context) (*appsv1.StatefulSet, error) {
	sts, err := component.ExistingStatefulSet(ctx, component.Clients{Client: s.r.client, Live: s.r.reader}, s.etcd)
	if err != nil {
		return nil, fmt.Errorf("reading statefulset: %w", err)
	}
	return sts, nil
}

// holdDuringQuorumLossRecovery keeps the spec flow from syncing anything while the heal flow bootstraps
// the cluster again (the decision table's case 10): the StatefulSet sync would scale the members back up before their
// pods are gone and their leases recreated. It runs before the operation is recorded, so lastOperation
// keeps telling the recovery's progress; the spec reconcile runs once the recovery is done.
func (s *specRun) holdDuringQuorumLossRecovery(ctx context.Context) flow.Result {
	sts, err := s.existingStatefulSet(ctx)
	if err != nil {
		return flow.Fail(err)
	}
	if heal.QuorumLossRecoveryInProgress(sts) {
		log.FromContext(ctx).Info("Spec reconcile waits for the quorum-loss recovery", "phase", decide.RecoveryPhaseOf(sts))
		return flow.RequeueAfter(heal.RecoveryPollPeriod, "quorum-loss recovery in progress")
	}
	return flow.Continue()
}

// holdRollingUpdate applies the rule for rolling updates to etcd members: when the sync would change the
// StatefulSet's pod template (and so restart every member in turn) while AllMembersReady or BackupReady is
// False, nothing is synced; lastOperation says Requeue with the reason, a Normal event tells the operator,
// and the flow comes back every status period until the cluster is healthy (decide.RollingUpdateAllowed
// lists the exceptions that let a change through because it may be needed to recover).
func (s *specRun) holdRollingUpdate(ctx context.Context) flow.Result {
	sts, err := s.existingStatefulSet(ctx)
	if err != nil || sts == nil {
		return flowResultOf(err)
	}
	rendered, err := statefulset.Render(ctx, s.r.client, s.r.config.Images, s.r.config.LocalBackup, s.target)
	if err != nil {
		return flow.Fail(err)
	}
	s.rendered = rendered // syncComponents hands it to the StatefulSet operator: one rendering per run
	if sts.Annotations[statefulset.PodTemplateChecksumAnnotation] == rendered.Checksum {
		return flow.Continue()
	}
	allowed, why := decide.RollingUpdateAllowed(s.etcd.Status, sts)
	if allowed {
		log.FromContext(ctx).V(1).Info("Rolling update allowed", "why", why)
		return flow.Continue()
	}
	log.FromContext(ctx).Info("Rolling update held back", "reason", why)
	s.r.recorder.Eventf(s.etcd, nil, "Normal", EventReasonRollingUpdateHeldBack, actionReconcile, "%s", why)
	if err := s.record(ctx, druidv1alpha1.LastOperationStateRequeue, why); err != nil {
		return flow.Fail(err)
	}
	return flow.RequeueAfter(s.r.config.StatusSyncPeriod, why)
}

func flowResultOf(err error) flow.Result {
	if err != nil {
		return flow.Fail(err)
	}
	return flow.Continue()
}
