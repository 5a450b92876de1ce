package app

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// finishTaskLikeDruid stands in for druid's EtcdOpsTask controller, which no test of this package runs: it
// waits for a task of the Etcd that has no state yet and writes the final status druid would. Druid's own
// handling of the task (admission, the call to the sidecar, the status it writes) is tested in
// test/integration/druid/etcdopstask; here only the command's side counts: that it creates the right task,
// waits for the state and reports what druid recorded.
func finishTaskLikeDruid(t *testing.T, env *envtest.Env, namespace, etcdName string, state druidv1alpha1.TaskState, description string, lastErrors ...druidv1alpha1.LastError) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			tasks := &druidv1alpha1.EtcdOpsTaskList{}
			if err := env.Client.List(ctx, tasks, client.InNamespace(namespace)); err != nil {
				return false, nil
			}
			for i := range tasks.Items {
				task := &tasks.Items[i]
				if ptr.Deref(task.Spec.EtcdName, "") != etcdName || task.Status.State != nil {
					continue
				}
				now := metav1.Now()
				operation := druidv1alpha1.LastOperationStateCompleted
				if state != druidv1alpha1.TaskStateSucceeded {
					operation = druidv1alpha1.LastOperationStateFailed
				}
				task.Status = druidv1alpha1.EtcdOpsTaskStatus{
					State: ptr.To(state), LastTransitionTime: &now, StartedAt: &now, LastErrors: lastErrors,
					LastOperation: &druidv1alpha1.LastOperation{Type: druidv1alpha1.LastOperationTypeExecution, State: operation,
						Description: description, RunID: "test", LastUpdateTime: now},
				}
				return env.Client.Status().Update(ctx, task) == nil, nil
			}
			return false, nil
		})
	}()
}

func snapshotTasks(t *testing.T, env *envtest.Env, namespace string) []druidv1alpha1.EtcdOpsTask {
	t.Helper()
	tasks := &druidv1alpha1.EtcdOpsTaskList{}
	NewWithT(t).Expect(env.Client.List(context.Background(), tasks, client.InNamespace(namespace))).To(Succeed())
	return tasks.Items
}

func TestEtcdSnapshotCreatesAnOpsTaskWithoutWaiting(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 1, nil, druidv1alpha1.EtcdStatus{})
	common := []string{"-n", namespace, "--kubeconfig", kubeconfigFor(t, env, "")}

	out, _, err := run(t, append([]string{"etcd", "snapshot", "etcd-main", "--full", "--wait=false"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	tasks := snapshotTasks(t, env, namespace)
	g.Expect(tasks).To(HaveLen(1))
	task := tasks[0]
	g.Expect(task.Name).To(HavePrefix("etcd-main-full-snapshot-"))
	g.Expect(task.Spec.EtcdName).To(HaveValue(Equal("etcd-main")))
	g.Expect(task.Spec.Config.OnDemandSnapshot).NotTo(BeNil())
	g.Expect(task.Spec.Config.OnDemandSnapshot.Type).To(Equal(druidv1alpha1.OnDemandSnapshotTypeFull))
	g.Expect(task.Spec.Config.OnDemandSnapshot.IsFinal).To(BeNil(), "never a final snapshot: that one stops the cluster's history")
	g.Expect(out).To(ContainSubstring("Created EtcdOpsTask " + task.Name + ": a full snapshot of Etcd etcd-main in namespace " + namespace))
	g.Expect(out).To(MatchRegexp(tableRow(task.Name, "etcd-main", "full", "Pending", "-").String()))

	// -o json: stdout is the task alone (progress goes to stderr), with its kind for kubectl apply and jq.
	out, errOut, err := run(t, append([]string{"etcd", "snapshot", "etcd-main", "--delta", "--wait=false", "-o", "json"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	printed := &druidv1alpha1.EtcdOpsTask{}
	g.Expect(json.Unmarshal([]byte(out), printed)).To(Succeed())
	g.Expect(printed.Kind).To(Equal("EtcdOpsTask"))
	g.Expect(printed.APIVersion).To(Equal("druid.gardener.cloud/v1alpha1"))
	g.Expect(printed.Name).To(HavePrefix("etcd-main-delta-snapshot-"))
	g.Expect(printed.Spec.Config.OnDemandSnapshot.Type).To(Equal(druidv1alpha1.OnDemandSnapshotTypeDelta))
	g.Expect(errOut).To(ContainSubstring("Created EtcdOpsTask " + printed.Name))
	g.Expect(snapshotTasks(t, env, namespace)).To(HaveLen(2))
}

func TestEtcdSnapshotWaitsForDruidsResult(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 1, nil, druidv1alpha1.EtcdStatus{})
	createEtcd(t, env, namespace, "etcd-events", 1, nil, druidv1alpha1.EtcdStatus{})
	common := []string{"-n", namespace, "--kubeconfig", kubeconfigFor(t, env, ""), "--poll-interval", "50ms", "--timeout", "30s"}

	const took = "took a full snapshot: Full-00000000-00000200-1700000000.gz (revision 200)"
	finishTaskLikeDruid(t, env, namespace, "etcd-main", druidv1alpha1.TaskStateSucceeded, took)
	out, _, err := run(t, append([]string{"etcd", "snapshot", "etcd-main", "--full"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Waiting up to 30s for druid to finish it ..."))
	g.Expect(out).To(MatchRegexp(tableRow(`etcd-main-full-snapshot-\S+`, "etcd-main", "full", "Succeeded", regexp.QuoteMeta(took)).String()))

	finishTaskLikeDruid(t, env, namespace, "etcd-events", druidv1alpha1.TaskStateRejected, "admission failed",
		druidv1alpha1.LastError{Code: "ERR_ETCD_NOT_READY", Description: "etcd etcd-events is not ready", ObservedAt: metav1.Now()})
	out, _, err = run(t, append([]string{"etcd", "snapshot", "etcd-events", "--delta"}, common...)...)
	g.Expect(err).To(MatchError(MatchRegexp(`^EtcdOpsTask did not succeed: etcd-events-delta-snapshot-\S+ is Rejected: admission failed; ERR_ETCD_NOT_READY: etcd etcd-events is not ready$`)))
	g.Expect(out).To(MatchRegexp(tableRow(`etcd-events-delta-snapshot-\S+`, "etcd-events", "delta", "Rejected", "admission failed; ERR_ETCD_NOT_READY: etcd etcd-events is not ready").String()))
}

func TestEtcdSnapshotRefusesBadRequestsAndReportsATimeout(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 1, nil, druidv1alpha1.EtcdStatus{})
	common := []string{"-n", namespace, "--kubeconfig", kubeconfigFor(t, env, "")}

	_, _, err := run(t, append([]string{"etcd", "snapshot", "etcd-main"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring("[full delta]")))
	_, _, err = run(t, append([]string{"etcd", "snapshot", "etcd-main", "--full", "--delta"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring("[full delta]")))
	_, _, err = run(t, append([]string{"etcd", "snapshot", "etcd-nope", "--full"}, common...)...)
	g.Expect(err).To(MatchError("no Etcd etcd-nope in namespace " + namespace))
	g.Expect(snapshotTasks(t, env, namespace)).To(BeEmpty(), "no task for a refused request")

	// No druid finishes the task: the wait ends with the state it was in.
	out, _, err := run(t, append([]string{"etcd", "snapshot", "etcd-main", "--full", "--timeout", "300ms", "--poll-interval", "50ms"}, common...)...)
	g.Expect(err).To(MatchError(MatchRegexp(`^EtcdOpsTask etcd-main-full-snapshot-\S+ did not finish within 300ms \(state Pending\)`)))
	g.Expect(out).To(MatchRegexp(tableRow(`etcd-main-full-snapshot-\S+`, "etcd-main", "full", "Pending", "-").String()))
}
