package etcdops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// SnapshotTask is an EtcdOpsTask that asks druid for an on-demand snapshot of typ of the Etcd: the task, not
// a call to the sidecar, so that druid checks its preconditions (ready, backup store, one task at a time,
// rate limit), records the outcome on the task and the operator needs no route into the pod network.
// The name is generated from the Etcd's, so repeated requests never collide.
func SnapshotTask(etcd types.NamespacedName, typ druidv1alpha1.OnDemandSnapshotType) *druidv1alpha1.EtcdOpsTask {
	return &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: etcd.Namespace, GenerateName: etcd.Name + "-" + string(typ) + "-snapshot-"},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{
			EtcdName: ptr.To(etcd.Name),
			Config:   druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: typ}},
		},
	}
}

// CreateSnapshotTask creates SnapshotTask after checking that the Etcd exists, so that a typo is an error
// here and not a task druid rejects later.
func CreateSnapshotTask(ctx context.Context, c client.Client, etcd types.NamespacedName, typ druidv1alpha1.OnDemandSnapshotType) (*druidv1alpha1.EtcdOpsTask, error) {
	if _, err := GetEtcd(ctx, c, etcd); err != nil {
		return nil, err
	}
	task := SnapshotTask(etcd, typ)
	if errs := validation.ValidateEtcdOpsTask(task); len(errs) > 0 {
		return nil, fmt.Errorf("the %s snapshot task for Etcd %s is invalid: %w", typ, etcd.Name, errs.ToAggregate())
	}
	if err := c.Create(ctx, task); err != nil {
		return nil, fmt.Errorf("creating a %s snapshot EtcdOpsTask for Etcd %s in %s: %w", typ, etcd.Name, etcd.Namespace, err)
	}
	return task, nil
}

// WaitTimeout is how long a caller waits for a snapshot task by default: the snapshot's own timeout (which
// druid counts from the task's start) plus time for druid to admit the task.
func WaitTimeout(task *druidv1alpha1.EtcdOpsTask) time.Duration {
	const admission = 2 * time.Minute
	if task.Spec.Config.OnDemandSnapshot == nil {
		return admission
	}
	return druidv1alpha1.OnDemandSnapshotTimeout(task.Spec.Config.OnDemandSnapshot) + admission
}

// WaitForTask polls the task every interval until druid finished it (Succeeded, Failed or Rejected) and
// returns it as last read; after timeout it returns the task as last read with an error saying the state
// it was in. A task deleted while waiting (its TTL ran out, or someone deleted it) is an error.
func WaitForTask(ctx context.Context, c client.Reader, task *druidv1alpha1.EtcdOpsTask, interval, timeout time.Duration) (*druidv1alpha1.EtcdOpsTask, error) {
	key := client.ObjectKeyFromObject(task)
	last := task.DeepCopy()
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		got := &druidv1alpha1.EtcdOpsTask{}
		if err := c.Get(ctx, key, got); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("EtcdOpsTask %s was deleted before it finished", key.Name)
			}
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				return false, fmt.Errorf("reading EtcdOpsTask %s: %w", key.Name, err) // waiting does not help
			}
			return false, nil // an apiserver hiccup: look again
		}
		last = got
		return got.IsCompleted(), nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			return last, fmt.Errorf("EtcdOpsTask %s did not finish within %s (state %s): is druid running with its EtcdOpsTask controller?",
				key.Name, timeout, TaskState(last))
		}
		return last, err
	}
	return last, nil
}

// TaskState is the task's state, "Pending" before druid wrote one (as druid treats a task without state).
func TaskState(task *druidv1alpha1.EtcdOpsTask) druidv1alpha1.TaskState {
	if task.Status.State == nil {
		return druidv1alpha1.TaskStatePending
	}
	return *task.Status.State
}

// TaskOutcome is what druid recorded as the result: the last operation's description and, for a task that
// did not succeed, its errors (code: description), newest last.
func TaskOutcome(task *druidv1alpha1.EtcdOpsTask) string {
	var parts []string
	if op := task.Status.LastOperation; op != nil && op.Description != "" {
		parts = append(parts, op.Description)
	}
	if TaskState(task) != druidv1alpha1.TaskStateSucceeded {
		for _, e := range task.Status.LastErrors {
			parts = append(parts, string(e.Code)+": "+e.Description)
		}
	}
	return strings.Join(parts, "; ")
}

// ErrTaskNotSucceeded is returned (wrapped) by TaskResult for a task that finished but did not succeed.
var ErrTaskNotSucceeded = errors.New("EtcdOpsTask did not succeed")

// TaskResult is nil for a task that succeeded and an error naming the state and outcome otherwise.
func TaskResult(task *druidv1alpha1.EtcdOpsTask) error {
	if state := TaskState(task); state != druidv1alpha1.TaskStateSucceeded {
		return fmt.Errorf("%w: %s is %s: %s", ErrTaskNotSucceeded, task.Name, state, TaskOutcome(task))
	}
	return nil
}
