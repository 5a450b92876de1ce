package heal

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// confirmFromAPIServer decides again on the member leases and pods read from the apiserver instead of the
// cache and returns the action of the same kind with the pods it was decided on, or false when the fresh
// picture no longer asks for it.
// Destructive actions (deleting pods, wiping a cluster) are confirmed this way: the cache can lag behind
// by the very writes that ended the situation — most notably the leases a quorum-loss recovery has just
// recreated, which a lagging cache still shows as the old, long-expired ones — and a pod that turned
// Ready again must keep its member out of a quorum-loss recovery.
func (h *healRun) confirmFromAPIServer(ctx context.Context, kind decide.Kind) (decide.Action, map[string]*corev1.Pod, bool, error) {
	fresh := h.input.Observed
	etcd := fresh.Etcd
	leases := &coordinationv1.LeaseList{}
	if err := h.deps.Reader.List(ctx, leases, client.InNamespace(etcd.Namespace), memberlease.Selector(etcd)); err != nil {
		return decide.Action{}, nil, false, fmt.Errorf("listing member leases: %w", err)
	}
	fresh.MemberLeases = leases.Items
	pods, err := listMemberPods(ctx, h.deps.Reader, etcd, fresh.StatefulSet)
	if err != nil {
		return decide.Action{}, nil, false, err
	}
	fresh.Pods = pods
	now := h.deps.Clock.Now()
	th := h.deps.thresholds()
	for _, a := range decide.Decide(decide.Input{Observed: fresh, Computed: health.ComputeStatus(fresh, th, now), Thresholds: th, Now: now}) {
		if a.Kind == kind {
			return a, fresh.Pods, true, nil
		}
	}
	return decide.Action{}, nil, false, nil
}
