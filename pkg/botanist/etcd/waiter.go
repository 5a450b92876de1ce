package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Unready lists why an Etcd is not ready from Gardener's point of view (gardenlet's checks): druid
// reported errors, has not reconciled the current generation or the requested operation yet, or (for a
// running cluster) not every member runs the current spec or the StatefulSet is not ready. Empty means ready.
func Unready(etcd *druidv1alpha1.Etcd) []string {
	var reasons []string
	s := etcd.Status
	if len(s.LastErrors) > 0 {
		reasons = append(reasons, fmt.Sprintf("druid reported %d error(s)", len(s.LastErrors)))
	}
	if s.ObservedGeneration == nil {
		reasons = append(reasons, "druid has not reconciled it yet (no observedGeneration)")
	} else if *s.ObservedGeneration != etcd.Generation {
		reasons = append(reasons, fmt.Sprintf("observedGeneration %d is behind generation %d", *s.ObservedGeneration, etcd.Generation))
	}
	if op, ok := etcd.Annotations[druidv1alpha1.GardenerOperationAnnotation]; ok {
		reasons = append(reasons, fmt.Sprintf("annotation %s=%s is still set", druidv1alpha1.GardenerOperationAnnotation, op))
	}
	if etcd.Spec.Replicas == 0 {
		return reasons
	}
	if c := druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeAllMembersUpdated); c == nil || c.Status != druidv1alpha1.ConditionTrue {
		reasons = append(reasons, "condition AllMembersUpdated is not True")
	}
	if s.Ready == nil || !*s.Ready {
		reasons = append(reasons, "status.ready is not true")
	}
	return reasons
}

// Wait polls until the Etcd is ready. On timeout the error carries what was still missing, druid's last
// errors and the conditions, so the shoot's last error tells an operator where to look without kubectl.
func (e *etcd) Wait(ctx context.Context) error {
	var last *druidv1alpha1.Etcd
	var reasons []string
	err := wait.PollUntilContextTimeout(ctx, e.values.WaitInterval, e.values.WaitTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := e.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			last, reasons = nil, []string{"it does not exist"}
			return false, nil
		case err != nil:
			// Transient (apiserver, client rate limit near the deadline): keep the last state, look again.
			reasons = append(withoutReadErrors(reasons), readErrorPrefix+err.Error())
			return false, nil
		}
		last, reasons = obj, Unready(obj)
		return len(reasons) == 0, nil
	})
	if err == nil {
		e.logger(ctx).Info("Etcd is ready")
		return nil
	}
	if !wait.Interrupted(err) {
		return fmt.Errorf("waiting for Etcd %s/%s: %w", e.namespace, e.name(), err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("waiting for Etcd %s/%s: %w: %s", e.namespace, e.name(), ctx.Err(), describeUnready(last, reasons))
	}
	return fmt.Errorf("etcd %s/%s not ready after %s: %s", e.namespace, e.name(), e.values.WaitTimeout, describeUnready(last, reasons))
}

// readErrorPrefix marks a reason that records a failed read rather than the Etcd's state.
const readErrorPrefix = "reading it failed: "

func withoutReadErrors(reasons []string) []string {
	out := reasons[:0:0]
	for _, r := range reasons {
		if !strings.HasPrefix(r, readErrorPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// describeUnready renders the missing parts, the last errors and the conditions of the last observed Etcd.
func describeUnready(etcd *druidv1alpha1.Etcd, reasons []string) string {
	var b strings.Builder
	b.WriteString("waiting for: " + strings.Join(reasons, "; "))
	if etcd == nil {
		return b.String()
	}
	for _, le := range etcd.Status.LastErrors {
		fmt.Fprintf(&b, "; last error %s: %s", le.Code, le.Description)
	}
	if len(etcd.Status.Conditions) == 0 {
		b.WriteString("; no conditions reported")
	}
	for _, c := range etcd.Status.Conditions {
		fmt.Fprintf(&b, "; condition %s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// WaitCleanup polls until the Etcd is gone; on timeout it says what holds it (finalizers).
func (e *etcd) WaitCleanup(ctx context.Context) error {
	var last *druidv1alpha1.Etcd
	var readErr error
	err := wait.PollUntilContextTimeout(ctx, e.values.WaitInterval, e.values.WaitTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := e.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			readErr = err // transient: look again
		default:
			last, readErr = obj, nil
		}
		return false, nil
	})
	if err == nil {
		e.logger(ctx).Info("Etcd is gone")
		return nil
	}
	if !wait.Interrupted(err) || last == nil || ctx.Err() != nil {
		return fmt.Errorf("waiting for Etcd %s/%s to be deleted: %w", e.namespace, e.name(), errors.Join(err, readErr))
	}
	state := "it is not being deleted"
	if last.DeletionTimestamp != nil {
		state = fmt.Sprintf("deletion requested at %s, finalizers %v", last.DeletionTimestamp.UTC().Format("15:04:05"), last.Finalizers)
	}
	return fmt.Errorf("etcd %s/%s still exists after %s: %s", e.namespace, e.name(), e.values.WaitTimeout, state)
}
