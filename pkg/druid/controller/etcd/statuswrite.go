package etcd

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// heldStatus carries status changes that one reconcile applied to its Etcd in memory without writing
// them: the spec flow's success (observedGeneration, lastOperation, lastErrors, SecretsReady) goes out with
// the status flow's write of the same reconcile. Each status write makes the apiserver decode, validate and
// encode the whole Etcd and sends a watch event to every druid replica; a burst of new Etcds paid it once
// more per Etcd when the success had a write of its own. stored is the status as last stored, the base
// of the next patch; nil while nothing is held.
type heldStatus struct {
	stored *druidv1alpha1.EtcdStatus
}

// hold applies mutate to etcd's status in memory only; the next patchStatus with h writes it.
func (h *heldStatus) hold(etcd *druidv1alpha1.Etcd, mutate func(*druidv1alpha1.EtcdStatus)) {
	if h.stored == nil {
		h.stored = etcd.Status.DeepCopy()
	}
	mutate(&etcd.Status)
}

// pending tells whether changes are held that are not stored yet. A nil h holds nothing.
func (h *heldStatus) pending() bool { return h != nil && h.stored != nil }

// patchStatus applies mutate to etcd's status and writes it, with what held holds (held may be nil), as a
// merge patch on the status subresource, only when something changed. etcd is updated with the
// apiserver's answer, so the next write in the same reconcile starts from what is stored. The patch
// carries etcd's resourceVersion: a merge patch computed against a stale copy from the cache would leave
// out fields that the stale copy happens to share with the new status, and keep whatever newer value is
// stored; the conflict makes the reconcile start over instead.
func (r *Reconciler) patchStatus(ctx context.Context, etcd *druidv1alpha1.Etcd, held *heldStatus, mutate func(*druidv1alpha1.EtcdStatus)) error {
	base := etcd.DeepCopy()
	if held.pending() {
		base.Status = *held.stored.DeepCopy()
	}
	mutate(&etcd.Status)
	if !equality.Semantic.DeepEqual(base.Status, etcd.Status) {
		if err := r.client.Status().Patch(ctx, etcd, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		r.own.record(etcd, r.clock.Now())
	}
	if held != nil {
		held.stored = nil
	}
	return nil
}

// setLastOperation records the operation of this run.
func (r *Reconciler) setLastOperation(ctx context.Context, etcd *druidv1alpha1.Etcd, op druidv1alpha1.LastOperation, lastErrors ...druidv1alpha1.LastError) error {
	op.LastUpdateTime = metav1.NewTime(r.clock.Now())
	return r.patchStatus(ctx, etcd, nil, func(s *druidv1alpha1.EtcdStatus) {
		s.LastOperation = &op
		if op.State == druidv1alpha1.LastOperationStateError {
			s.LastErrors = lastErrors
		}
	})
}

// onlyHeartbeatsDiffer tells whether two statuses differ in nothing but the conditions' lastUpdateTime. The
// status flow then skips the write unless the last one is older than heartbeat, so that 500 healthy Etcds
// do not cost a status write every period while lastUpdateTime still shows that druid is watching.
func onlyHeartbeatsDiffer(old, updated druidv1alpha1.EtcdStatus, now time.Time, heartbeat time.Duration) bool {
	if len(old.Conditions) != len(updated.Conditions) {
		return false
	}
	a, b := old.DeepCopy(), updated.DeepCopy()
	for i := range a.Conditions {
		if now.Sub(a.Conditions[i].LastUpdateTime.Time) >= heartbeat {
			return false
		}
		a.Conditions[i].LastUpdateTime = metav1.Time{}
		b.Conditions[i].LastUpdateTime = metav1.Time{}
	}
	return equality.Semantic.DeepEqual(a, b)
}
