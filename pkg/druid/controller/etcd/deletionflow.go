package etcd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
)

// deletionPollPeriod is how often the deletion flow checks whether the components are gone; owned
// StatefulSet and lease events usually bring it back earlier.
const deletionPollPeriod = 5 * time.Second

type deletionRun struct {
	r    *Reconciler
	etcd *druidv1alpha1.Etcd
	op   druidv1alpha1.LastOperation
}

// deletionSteps is the deletion flow: record operation → delete components → wait until gone → hooks →
// remove the finalizer.
func (r *Reconciler) deletionSteps(etcd *druidv1alpha1.Etcd) []flow.Step {
	run := &deletionRun{r: r, etcd: etcd, op: druidv1alpha1.LastOperation{Type: druidv1alpha1.LastOperationTypeDelete, RunID: string(uuid.NewUUID())}}
	if last := etcd.Status.LastOperation; last != nil && last.Type == druidv1alpha1.LastOperationTypeDelete {
		run.op.RunID = last.RunID // one deletion is one run, however often it is requeued
	}
	return []flow.Step{
		{Name: "recordOperationStart", Run: run.recordStart},
		{Name: "triggerDeleteComponents", Run: run.triggerDelete},
		{Name: "waitUntilComponentsGone", Run: run.waitUntilGone},
		{Name: "runDeletionHooks", Run: run.runHooks},
		{Name: "removeFinalizer", Run: run.removeFinalizer},
	}
}

func (d *deletionRun) recordStart(ctx context.Context) flow.Result {
	if last := d.etcd.Status.LastOperation; last != nil && last.Type == druidv1alpha1.LastOperationTypeDelete &&
		last.State == druidv1alpha1.LastOperationStateProcessing {
		return flow.Continue()
	}
	op := d.op
	op.State, op.Description = druidv1alpha1.LastOperationStateProcessing, "deleting all components"
	if err := d.r.setLastOperation(ctx, d.etcd, op); err != nil {
		return flow.Fail(err)
	}
	return flow.Continue()
}

// triggerDelete deletes in reverse registry order, so that the pods (StatefulSet) go before the objects
// they depend on.
func (d *deletionRun) triggerDelete(ctx context.Context) flow.Result {
	var errs []string
	target := druidv1alpha1.Defaulted(d.etcd)
	for i := len(d.r.registry) - 1; i >= 0; i-- {
		if err := d.r.registry[i].Operator.TriggerDelete(ctx, target); err != nil {
			errs = append(errs, err.Error())
			d.r.recordDeletionError(ctx, d.etcd, d.op, err)
		}
	}
	if len(errs) > 0 {
		return flow.Fail(fmt.Errorf("deleting components: %s", strings.Join(errs, "; ")))
	}
	return flow.Continue()
}

func (d *deletionRun) waitUntilGone(ctx context.Context) flow.Result {
	target := druidv1alpha1.Defaulted(d.etcd)
	var remaining []string
	for _, reg := range d.r.registry {
		names, err := reg.Operator.GetExistingResourceNames(ctx, target)
		if err != nil {
			return flow.Fail(err)
		}
		for _, n := range names {
			remaining = append(remaining, fmt.Sprintf("%s %s", reg.Kind, n))
		}
	}
	if len(remaining) > 0 {
		sort.Strings(remaining)
		return flow.RequeueAfter(deletionPollPeriod, "waiting for deletion of "+strings.Join(remaining, ", "))
	}
	return flow.Continue()
}

func (d *deletionRun) runHooks(ctx context.Context) flow.Result {
	for _, hook := range d.r.hooks {
		if err := hook(ctx, d.etcd); err != nil {
			return flow.Fail(fmt.Errorf("deletion hook: %w", err))
		}
	}
	return flow.Continue()
}

func (d *deletionRun) removeFinalizer(ctx context.Context) flow.Result {
	base := d.etcd.DeepCopy()
	controllerutil.RemoveFinalizer(d.etcd, druidv1alpha1.FinalizerName)
	if err := d.r.client.Patch(ctx, d.etcd, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return flow.Fail(fmt.Errorf("removing finalizer: %w", err))
	}
	log.FromContext(ctx).Info("Deleted all components and removed the finalizer")
	return flow.Continue()
}

// recordDeletionError puts a failed deletion into lastErrors and emits a Warning; a failure to record it
// is only logged, because the deletion error is what the flow returns.
func (r *Reconciler) recordDeletionError(ctx context.Context, etcd *druidv1alpha1.Etcd, op druidv1alpha1.LastOperation, err error) {
	r.recorder.Eventf(etcd, nil, "Warning", EventReasonDeletionError, actionDelete, "%v", err)
	op.State, op.Description = druidv1alpha1.LastOperationStateError, err.Error()
	if recordErr := r.setLastOperation(ctx, etcd, op, component.AsLastError(err, r.clock.Now())); recordErr != nil {
		log.FromContext(ctx).Error(recordErr, "Recording the deletion error failed")
	}
}
