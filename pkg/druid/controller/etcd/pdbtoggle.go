package etcd

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/poddisruptionbudget"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
)

// togglePodDisruptionBudget re-syncs the PodDisruptionBudget when this reconcile's status writes changed the
// minAvailable that poddisruptionbudget.DecisionTablePolicy derives from the conditions (AllMembersReady,
// BackupReady, the number of Ready members). The spec flow syncs the PDB too, but it does not run when
// only the health changes, and evictions must be blocked as soon as the cluster degrades. Comparing the
// policy before and after the write keeps the PDB sync (and its patch) out of the periodic status sync.
//
// Only Etcds that had a spec reconcile (observedGeneration set) get their PDB touched here, so that an
// Etcd held back by missing secrets still has no component at all.
func (h *healFlow) togglePodDisruptionBudget(ctx context.Context) flow.Result {
	if h.etcd.Status.ObservedGeneration == nil {
		return flow.Continue()
	}
	before := poddisruptionbudget.DecisionTablePolicy(h.before)
	target := druidv1alpha1.Defaulted(h.etcd)
	after := poddisruptionbudget.DecisionTablePolicy(target)
	if before == after {
		return flow.Continue()
	}
	if err := h.r.registry.Get(component.KindPodDisruptionBudget).Sync(ctx, target); err != nil {
		return flow.Fail(fmt.Errorf("toggling the PodDisruptionBudget's minAvailable: %w", err))
	}
	log.FromContext(ctx).Info("PodDisruptionBudget minAvailable changed with the cluster's health", "from", before, "to", after)
	h.r.recorder.Eventf(h.etcd, nil, "Normal", EventReasonPodDisruptionBudgetUpdated, actionHeal,
		"PodDisruptionBudget minAvailable %d → %d (AllMembersReady/BackupReady changed)", before, after)
	return flow.Continue()
}
