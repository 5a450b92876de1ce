package etcd

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
)

// existingStatefulSet reads the Etcd's StatefulSet from the cache and, on a miss, from the apiserver (one a
// upstream druid created may lack the label the cache selects on, and the spec flow must see it); nil when
// it does not exist.
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

// renderPodTemplate renders target's pod template once per run, for syncComponents to hand to the
// StatefulSet operator (nil while no StatefulSet exists: the operator renders it on creation). A template
// change is not held back here while members are not ready or the backup is not current: the StatefulSet
// updates OnDelete, so writing the template restarts no member, and the pod update (podupdate.go) decides
// member by member whether one may be replaced — a member that does not serve first, where the new template
// may be its remedy, a serving one only while the quorum holds and BackupReady is not False.
func (s *specRun) renderPodTemplate(ctx context.Context) flow.Result {
	sts, err := s.existingStatefulSet(ctx)
	if err != nil || sts == nil {
		return flowResultOf(err)
	}
	rendered, err := statefulset.Render(ctx, s.r.client, s.r.config.Images, s.r.config.LocalBackup, s.target)
	if err != nil {
		return flow.Fail(err)
	}
	s.rendered = rendered
	return flow.Continue()
}

func flowResultOf(err error) flow.Result {
	if err != nil {
		return flow.Fail(err)
	}
	return flow.Continue()
}
