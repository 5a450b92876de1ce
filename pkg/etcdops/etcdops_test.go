package etcdops

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// A switch set without a reason is refused before the cluster is asked (hence no client).
func TestSetSwitchRequiresAReason(t *testing.T) {
	_, err := SetSwitch(context.Background(), nil, types.NamespacedName{Namespace: "ns", Name: "etcd-main"}, SuspendSpecReconcile, "")
	want := "a reason is required for spec reconcile suspended (it becomes the value of druid.gardener.cloud/suspend-etcd-spec-reconcile)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestTaskOutcomeShowsErrorsOnlyOfTasksThatDidNotSucceed(t *testing.T) {
	task := &druidv1alpha1.EtcdOpsTask{}
	task.Name = "t"
	if got := TaskState(task); got != druidv1alpha1.TaskStatePending {
		t.Errorf("a task without state is %s, want Pending", got)
	}
	task.Status.LastOperation = &druidv1alpha1.LastOperation{Description: "took no delta snapshot"}
	task.Status.LastErrors = []druidv1alpha1.LastError{{Code: "ERR_EXECUTE_HTTP_REQUEST", Description: "retrying"}}
	task.Status.State = ptr.To(druidv1alpha1.TaskStateSucceeded)
	if got := TaskOutcome(task); got != "took no delta snapshot" {
		t.Errorf("succeeded: got %q", got)
	}
	if err := TaskResult(task); err != nil {
		t.Errorf("succeeded: got %v", err)
	}
	task.Status.State = ptr.To(druidv1alpha1.TaskStateFailed)
	want := "EtcdOpsTask did not succeed: t is Failed: took no delta snapshot; ERR_EXECUTE_HTTP_REQUEST: retrying"
	if err := TaskResult(task); err == nil || err.Error() != want {
		t.Errorf("failed: got %v, want %q", err, want)
	}
}
