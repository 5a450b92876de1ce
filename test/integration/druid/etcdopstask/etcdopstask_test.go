package etcdopstask

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcdopstask"
	"github.com/gardener-etcd/gardener-etcd/test/support/sidecarstandin"
)

const (
	timeout = 20 * time.Second
	poll    = 100 * time.Millisecond
)

var ctx = context.Background()

// createEtcd stores an Etcd with a Local backup store and Gardener's backup TLS (the secrets of the
// namespace's stand-in sidecar), then writes a status that says ready, as druid's Etcd controller would
// for a running cluster. mutate changes the Etcd before it is stored (status included).
func createEtcd(t *testing.T, namespace, name string, mutate ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	t.Helper()
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	etcd.Spec.Replicas = 1
	etcd.Spec.Labels = map[string]string{"app": name}
	etcd.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Container: ptr.To("bkp"), Prefix: "shoot--dev--a/" + name, Provider: ptr.To(druidv1alpha1.StorageProviderLocal)}
	sidecarstandin.WithBackupTLS(etcd)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	status := druidv1alpha1.EtcdStatus{
		Ready: ptr.To(true),
		Conditions: []druidv1alpha1.Condition{{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionTrue,
			LastTransitionTime: now, LastUpdateTime: now, Reason: "Quorate", Message: "The majority of ETCD members is ready."}},
	}
	etcd.Status = status
	for _, m := range mutate {
		m(etcd)
	}
	status = etcd.Status
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	etcd.Status = status
	g.Expect(env.Client.Status().Update(ctx, etcd)).To(Succeed())
	return etcd
}

func fullSnapshot() druidv1alpha1.OnDemandSnapshotConfig {
	return druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull}
}

// createTask stores an on-demand snapshot task for the Etcd etcdName.
func createTask(t *testing.T, namespace, name, etcdName string, snapshot druidv1alpha1.OnDemandSnapshotConfig, ttlSeconds int32) *druidv1alpha1.EtcdOpsTask {
	t.Helper()
	task := &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{
			EtcdName:                ptr.To(etcdName),
			TTLSecondsAfterFinished: ptr.To(ttlSeconds),
			Config:                  druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: &snapshot},
		},
	}
	NewWithT(t).Expect(env.Client.Create(ctx, task)).To(Succeed())
	return task
}

// stored reads the task as the apiserver has it.
func stored(task *druidv1alpha1.EtcdOpsTask) func(g Gomega) *druidv1alpha1.EtcdOpsTask {
	return func(g Gomega) *druidv1alpha1.EtcdOpsTask {
		got := &druidv1alpha1.EtcdOpsTask{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(task), got)).To(Succeed())
		return got
	}
}

func haveState(state druidv1alpha1.TaskState) OmegaMatcher {
	return WithTransform(func(task *druidv1alpha1.EtcdOpsTask) druidv1alpha1.TaskState { return ptr.Deref(task.Status.State, "") }, Equal(state))
}

// waitForState waits until the task reaches state and returns it.
func waitForState(t *testing.T, task *druidv1alpha1.EtcdOpsTask, state druidv1alpha1.TaskState) *druidv1alpha1.EtcdOpsTask {
	t.Helper()
	var got *druidv1alpha1.EtcdOpsTask
	NewWithT(t).Eventually(func(g Gomega) {
		got = stored(task)(g)
		g.Expect(got).To(haveState(state))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return got
}

// expectError checks that the task's newest error has code and says message.
func expectError(g Gomega, task *druidv1alpha1.EtcdOpsTask, code druidv1alpha1.ErrorCode, message string) {
	g.ExpectWithOffset(1, task.Status.LastErrors).NotTo(BeEmpty())
	last := task.Status.LastErrors[len(task.Status.LastErrors)-1]
	g.ExpectWithOffset(1, last.Code).To(Equal(code))
	g.ExpectWithOffset(1, last.Description).To(ContainSubstring(message))
}

// events are the task's events as "<type>/<reason>: <note>".
func events(task *druidv1alpha1.EtcdOpsTask) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(task.Namespace))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "EtcdOpsTask" && e.Regarding.Name == task.Name {
				out = append(out, e.Type+"/"+e.Reason+": "+e.Note)
			}
		}
		return out
	}
}

// snapshotJSON is the sidecar's answer for a snapshot at revision: a full one (final when asked so) or a
// delta from revision-10.
func snapshotJSON(w http.ResponseWriter, r *http.Request, revision int64) string {
	now := time.Now().UTC().Truncate(time.Second)
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/snapshot/delta" {
		name := fmt.Sprintf("Incr-%08d-%08d-%d.gz", revision-10, revision, now.Unix())
		_, _ = fmt.Fprintf(w, `{"kind":"Incr","startRevision":%d,"lastRevision":%d,"createdOn":%q,"snapDir":"","snapName":%q,"prefix":"shoot--dev--a/etcd-main","compressionSuffix":".gz","isFinal":false}`,
			revision-10, revision, now.Format(time.RFC3339), name)
		return name
	}
	final := r.URL.Query().Get("final") == "true"
	name := fmt.Sprintf("Full-00000000-%08d-%d.gz", revision, now.Unix())
	if final {
		name += ".final"
	}
	_, _ = fmt.Fprintf(w, `{"kind":"Full","startRevision":0,"lastRevision":%d,"createdOn":%q,"snapDir":"","snapName":%q,"prefix":"shoot--dev--a/etcd-main","compressionSuffix":".gz","isFinal":%t}`,
		revision, now.Format(time.RFC3339), name, final)
	return name
}

// A final full snapshot: druid asks the sidecar's /snapshot/full?final=true with the Etcd's backup client
// certificate, records the snapshot the sidecar names, emits events, and deletes the task once
// ttlSecondsAfterFinished has passed since it finished — not before.
func TestFinalFullSnapshotIsRecordedAndTheTaskDeletedAfterItsTTL(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	names := make(chan string, 1)
	sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) {
		names <- snapshotJSON(w, r, 4242)
	})
	createEtcd(t, ns, "etcd-main", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{validation.FinalSnapshotAllowedAnnotation: "true"} // its clients are stopped
	})
	const ttl = 15 // long enough that even a loaded machine sees the finished task well before it expires
	task := createTask(t, ns, "final-snapshot", "etcd-main", druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull, IsFinal: ptr.To(true)}, ttl)

	done := waitForState(t, task, druidv1alpha1.TaskStateSucceeded)
	name := <-names
	g.Expect(sidecar.RequestURIs()).To(Equal([]string{"/snapshot/full?final=true"}))
	g.Expect(done.Status.LastOperation).NotTo(BeNil())
	g.Expect(done.Status.LastOperation.Description).To(ContainSubstring(name+" (revision 4242)"), "upstream's task status has no snapshot field: the description names it")
	g.Expect(done.Status.StartedAt).NotTo(BeNil())
	g.Expect(done.Status.LastTransitionTime).NotTo(BeNil())
	g.Expect(done.Status.LastErrors).To(BeEmpty())
	g.Expect(done.Status.LastOperation).NotTo(BeNil())
	g.Expect(done.Status.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeExecution))
	g.Expect(done.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateCompleted))
	g.Expect(done.Status.LastOperation.Description).To(ContainSubstring("took a final full snapshot: " + name + " (revision 4242)"))
	g.Eventually(events(task)).WithTimeout(timeout).WithPolling(poll).Should(ContainElements(
		HavePrefix("Normal/"+etcdopstask.EventReasonSnapshotStarted+": Taking a final full snapshot of Etcd etcd-main"),
		HavePrefix("Normal/"+etcdopstask.EventReasonSnapshotSucceeded+": Etcd etcd-main: took a final full snapshot: "+name),
	))

	// The task lives until lastTransitionTime + ttl (druid counts from the stored time), and is gone soon after.
	// Should the test still see the finished task too late to watch it wait, it says so as a skip of that
	// check (visible in the test output) and checks the deletion alone.
	expiry := done.Status.LastTransitionTime.Add(ttl * time.Second)
	if left := time.Until(expiry); left > time.Second {
		g.Consistently(func() error {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(task), &druidv1alpha1.EtcdOpsTask{})
		}).WithTimeout(left-300*time.Millisecond).WithPolling(poll).Should(Succeed(), "not deleted before its TTL")
	} else {
		t.Logf("SKIP of the TTL wait check: the test saw the task finish with %s of its %ds TTL left", left.Round(time.Millisecond), ttl)
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(task), &druidv1alpha1.EtcdOpsTask{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "the task is deleted once its TTL ran out")
	g.Expect(sidecar.Requests()).To(Equal(1), "the snapshot was taken once")
	g.Expect(getEtcd(g, ns, "etcd-main").Annotations).NotTo(HaveKey(validation.FinalSnapshotAllowedAnnotation),
		"the declaration is used up by the final snapshot it admitted")
}

// The declaration that an Etcd's clients are stopped holds for one final snapshot: druid removes the
// annotation once a final snapshot task it admitted succeeded, so after a wake-up a final snapshot task
// of the running cluster is refused again until someone declares anew. A final snapshot that failed
// leaves it (the task is created again), and so does any other task.
func TestFinalSnapshotAllowedIsUsedUpByTheFinalSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	var failing atomic.Bool
	failing.Store(true)
	sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "taking the full snapshot: uploading: connection reset by peer", http.StatusInternalServerError)
			return
		}
		snapshotJSON(w, r, 8)
	})
	createEtcd(t, ns, "etcd-main", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{validation.FinalSnapshotAllowedAnnotation: "true"}
	})
	final := druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull, IsFinal: ptr.To(true)}

	waitForState(t, createTask(t, ns, "final-1", "etcd-main", final, 3600), druidv1alpha1.TaskStateFailed)
	g.Expect(getEtcd(g, ns, "etcd-main").Annotations).To(HaveKeyWithValue(validation.FinalSnapshotAllowedAnnotation, "true"), "a failed final snapshot leaves it")

	failing.Store(false)
	createEtcd(t, ns, "etcd-other", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{validation.FinalSnapshotAllowedAnnotation: "true"}
	})
	waitForState(t, createTask(t, ns, "final-2", "etcd-other", final, 3600), druidv1alpha1.TaskStateSucceeded)
	g.Eventually(func(g Gomega) {
		g.Expect(getEtcd(g, ns, "etcd-other").Annotations).NotTo(HaveKey(validation.FinalSnapshotAllowedAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(getEtcd(g, ns, "etcd-main").Annotations).To(HaveKeyWithValue(validation.FinalSnapshotAllowedAnnotation, "true"), "another Etcd's is kept")

	// Woken up and running again: the next final snapshot task is refused (stored while the webhook was
	// off, it is Rejected by druid).
	again := waitForState(t, createTask(t, ns, "final-3", "etcd-other", final, 3600), druidv1alpha1.TaskStateRejected)
	expectError(g, again, etcdopstask.ErrInvalidTask, "spec.config.onDemandSnapshot.isFinal: Forbidden")
	g.Expect(sidecar.Requests()).To(Equal(2))
}

// getEtcd reads the stored Etcd.
func getEtcd(g Gomega, namespace, name string) *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, etcd)).To(Succeed())
	return etcd
}

// A delta snapshot asks /snapshot/delta and records the delta; when the sidecar had nothing new to store
// (it answers null) the task succeeds without a snapshot and says so.
func TestDeltaSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	var answered atomic.Int32
	sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) {
		if answered.Add(1) > 1 { // the second task starts after the first finished
			_, _ = w.Write([]byte("null"))
			return
		}
		snapshotJSON(w, r, 120)
	})
	createEtcd(t, ns, "etcd-main")
	createEtcd(t, ns, "etcd-events") // a second delta of etcd-main would wait for the minimum interval
	delta := druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeDelta}

	first := waitForState(t, createTask(t, ns, "delta-1", "etcd-main", delta, 3600), druidv1alpha1.TaskStateSucceeded)
	g.Expect(first.Status.LastOperation.Description).To(MatchRegexp(`^took a delta snapshot: Incr-00000110-00000120-\d+\.gz \(revision 120\)$`))

	second := waitForState(t, createTask(t, ns, "delta-2", "etcd-events", delta, 3600), druidv1alpha1.TaskStateSucceeded)
	g.Expect(second.Status.LastOperation.Description).To(Equal("took no delta snapshot: nothing changed since the last snapshot"))
	g.Expect(sidecar.RequestURIs()).To(Equal([]string{"/snapshot/delta", "/snapshot/delta"}))
}

// One task per Etcd at a time: a task created while another of the same Etcd runs is Rejected with
// ERR_DUPLICATE_TASK naming the running one, and never reaches the sidecar; the running one completes.
func TestSecondTaskForTheSameEtcdIsRejectedWhileOneRuns(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	release := make(chan struct{})
	sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) {
		<-release // the snapshot takes until the test lets it finish
		snapshotJSON(w, r, 77)
	})
	released := false
	t.Cleanup(func() { // before the stand-in closes, which waits for its requests
		if !released {
			close(release)
		}
	})
	createEtcd(t, ns, "etcd-main")

	running := createTask(t, ns, "first", "etcd-main", fullSnapshot(), 3600)
	waitForState(t, running, druidv1alpha1.TaskStateInProgress)
	g.Eventually(sidecar.Requests).WithTimeout(timeout).WithPolling(poll).Should(Equal(1))

	second := createTask(t, ns, "second", "etcd-main", fullSnapshot(), 3600)
	rejected := waitForState(t, second, druidv1alpha1.TaskStateRejected)
	expectError(g, rejected, etcdopstask.ErrDuplicateTask, "EtcdOpsTask first for Etcd "+ns+"/etcd-main is not finished yet (state InProgress)")
	g.Expect(rejected.Status.StartedAt).To(BeNil(), "a rejected task never started")
	g.Expect(rejected.Status.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeAdmit))
	g.Expect(rejected.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateFailed))
	g.Eventually(events(second)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(
		HavePrefix("Warning/" + etcdopstask.EventReasonRejected + ": ERR_DUPLICATE_TASK")))

	close(release)
	released = true
	waitForState(t, running, druidv1alpha1.TaskStateSucceeded)
	g.Expect(sidecar.Requests()).To(Equal(1), "the rejected task did not ask for a snapshot")
	g.Expect(stored(second)(g)).To(haveState(druidv1alpha1.TaskStateRejected), "rejection is final")

	// Once the first task finished, a new task of the Etcd is no longer a duplicate: what keeps it now is
	// the rate limit (TestTasksAreRateLimitedPerEtcd).
	third := waitForState(t, createTask(t, ns, "third", "etcd-main", druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeDelta}, 3600),
		druidv1alpha1.TaskStateRejected)
	expectError(g, third, etcdopstask.ErrTooFrequent, "EtcdOpsTask first started a full snapshot of Etcd etcd-main at ")
}

// Tasks whose preconditions do not hold are Rejected at admission with a clear error, a Warning event, and
// no call to the sidecar (each namespace has a stand-in that would answer).
func TestTasksAreRejectedWhenTheirPreconditionsFail(t *testing.T) {
	cases := []struct {
		name    string
		etcd    func(*druidv1alpha1.Etcd) // nil: no Etcd
		config  druidv1alpha1.EtcdOpsTaskConfig
		code    druidv1alpha1.ErrorCode
		message string
	}{
		{"no Etcd", nil, druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())},
			etcdopstask.ErrGetEtcd, "/etcd-main does not exist"},
		{"no backup store", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store = nil }, druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())},
			etcdopstask.ErrBackupNotEnabled, "Etcd etcd-main has no backup store (spec.backup.store)"},
		{"quorum lost", func(e *druidv1alpha1.Etcd) {
			e.Status.Ready = ptr.To(false)
			e.Status.Conditions[0].Status, e.Status.Conditions[0].Reason = druidv1alpha1.ConditionFalse, "QuorumLost"
		}, druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())},
			etcdopstask.ErrEtcdNotReady, "Etcd etcd-main is not ready: condition Ready is False (QuorumLost)"},
		{"hibernated", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 }, druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())},
			etcdopstask.ErrEtcdNotReady, "it is hibernated"},
		{"no client certificate", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.TLS.ClientTLSSecretRef = corev1.SecretReference{} },
			druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())},
			etcdopstask.ErrNoClientCertificate, "spec.backup.tls.clientTLSSecretRef is not set"},
		{"final snapshot of an Etcd whose clients nothing declared stopped", func(*druidv1alpha1.Etcd) {},
			druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull, IsFinal: ptr.To(true)}},
			etcdopstask.ErrInvalidTask, "spec.config.onDemandSnapshot.isFinal: Forbidden: a final full snapshot marks Etcd etcd-main as shut down on purpose"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.CreateNamespace(t)
			sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) { snapshotJSON(w, r, 5) })
			if tc.etcd != nil {
				createEtcd(t, ns, "etcd-main", tc.etcd)
			}
			task := &druidv1alpha1.EtcdOpsTask{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "task"},
				Spec:       druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: tc.config},
			}
			g.Expect(env.Client.Create(ctx, task)).To(Succeed(), "the CRD takes what the upstream CRD takes")

			rejected := waitForState(t, task, druidv1alpha1.TaskStateRejected)
			expectError(g, rejected, tc.code, tc.message)
			g.Expect(rejected.Status.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeAdmit))
			g.Expect(rejected.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateFailed))
			g.Expect(rejected.Status.StartedAt).To(BeNil())
			g.Eventually(events(task)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(
				HavePrefix("Warning/" + etcdopstask.EventReasonRejected + ": " + string(tc.code))))
			g.Expect(sidecar.Requests()).To(BeZero(), "a rejected task does not ask for a snapshot")
		})
	}
}

// The sidecar answering with an error fails the task at once with that error (ERR_CREATE_SNAPSHOT); it is
// not asked again.
func TestSidecarFailureFailsTheTask(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := sidecarstandin.Start(t, env.Client, &sidecars, ns, func(w http.ResponseWriter) {
		http.Error(w, "taking the full snapshot: uploading: connection reset by peer", http.StatusInternalServerError)
	})
	createEtcd(t, ns, "etcd-main")
	task := createTask(t, ns, "full", "etcd-main", fullSnapshot(), 3600)

	failed := waitForState(t, task, druidv1alpha1.TaskStateFailed)
	expectError(g, failed, etcdopstask.ErrCreateSnapshot, "500 Internal Server Error: taking the full snapshot: uploading: connection reset by peer")
	g.Expect(failed.Status.StartedAt).NotTo(BeNil(), "the task ran")
	g.Expect(failed.Status.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeExecution))
	g.Expect(failed.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateFailed))
	g.Eventually(events(task)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(
		HavePrefix("Warning/" + etcdopstask.EventReasonSnapshotFailed + ": ERR_CREATE_SNAPSHOT: the backup-restore sidecar did not take a full snapshot")))
	g.Consistently(sidecar.Requests).WithTimeout(time.Second).WithPolling(poll).Should(Equal(1), "a failed task is not retried")
}

// A sidecar that answers 503 Service Unavailable (it does not know the backup leader yet, e.g. right after
// its member restarted) is asked again, and the task succeeds once the sidecar takes the snapshot.
func TestUnavailableSidecarIsAskedAgain(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	var answered atomic.Int32
	sidecar := sidecarstandin.Start(t, env.Client, &sidecars, ns, func(w http.ResponseWriter) {
		if answered.Add(1) == 1 {
			http.Error(w, "finding the backup leader: no backup leader known yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("null")) // nothing changed since the last snapshot
	})
	createEtcd(t, ns, "etcd-main")
	task := createTask(t, ns, "delta", "etcd-main", druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeDelta, TimeoutSecondsDelta: ptr.To[int32](30)}, 3600)

	succeeded := waitForState(t, task, druidv1alpha1.TaskStateSucceeded)
	g.Expect(sidecar.Requests()).To(Equal(2), "asked again after the 503")
	expectError(g, succeeded, etcdopstask.ErrExecuteHTTPRequest, "503 Service Unavailable")
}

// A sidecar that cannot be reached is asked again every retry interval until the task's timeout
// (timeoutSecondsDelta, its minimum of 10 s here) is used up; then the task fails with
// ERR_EXECUTE_HTTP_REQUEST, having recorded each attempt's error.
func TestUnreachableSidecarFailsTheTaskAfterItsTimeout(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	// The backup TLS secrets exist, but the stand-in is not where druid looks for the namespace's sidecar.
	var elsewhere sidecarstandin.Endpoints
	sidecarstandin.Start(t, env.Client, &elsewhere, ns, func(http.ResponseWriter) {})
	createEtcd(t, ns, "etcd-main")
	task := createTask(t, ns, "delta", "etcd-main", druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeDelta, TimeoutSecondsDelta: ptr.To[int32](10)}, 3600)

	inProgress := waitForState(t, task, druidv1alpha1.TaskStateInProgress)
	var failed *druidv1alpha1.EtcdOpsTask
	g.Eventually(func(g Gomega) {
		failed = stored(task)(g)
		g.Expect(failed).To(haveState(druidv1alpha1.TaskStateFailed))
	}).WithTimeout(30 * time.Second).WithPolling(poll).Should(Succeed())
	expectError(g, failed, etcdopstask.ErrExecuteHTTPRequest, "a delta snapshot was not taken within 10s (timeout): requesting a delta snapshot:")
	g.Expect(failed.Status.LastTransitionTime.Sub(inProgress.Status.StartedAt.Time)).To(BeNumerically(">=", 9*time.Second), "not before the timeout")
	attempts := 0
	for _, e := range failed.Status.LastErrors {
		if e.Code == etcdopstask.ErrExecuteHTTPRequest {
			attempts++
		}
	}
	g.Expect(attempts).To(BeNumerically(">", 2), "retried: %v", failed.Status.LastErrors)
	g.Expect(len(failed.Status.LastErrors)).To(BeNumerically("<=", druidv1alpha1.MaxOpsTaskLastErrors))
}

// The CRD refuses invalid specs with messages naming the field, fills the upstream defaults, and keeps the
// spec immutable.
func TestCRDRejectsInvalidTasksAndKeepsTheSpec(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	cases := map[string]struct {
		mutate  func(*druidv1alpha1.EtcdOpsTask)
		message string
	}{
		"final delta": {func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.Type, task.Spec.Config.OnDemandSnapshot.IsFinal = druidv1alpha1.OnDemandSnapshotTypeDelta, ptr.To(true)
		}, "spec.config.onDemandSnapshot: Invalid value: isFinal must be false (or omitted) when type is 'delta'"},
		"unknown type": {func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.Config.OnDemandSnapshot.Type = "incremental" },
			`spec.config.onDemandSnapshot.type: Unsupported value: "incremental": supported values: "full", "delta"`},
		"full timeout below its minimum": {func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull = ptr.To[int32](60)
		},
			"spec.config.onDemandSnapshot.timeoutSecondsFull: Invalid value: 60: spec.config.onDemandSnapshot.timeoutSecondsFull in body should be greater than or equal to 120"},
		"no operation": {func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.Config = druidv1alpha1.EtcdOpsTaskConfig{} },
			"spec.config: Invalid value: 0: spec.config in body should have at least 1 properties"},
		"zero ttl": {func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) },
			"spec.ttlSecondsAfterFinished: Invalid value: 0: spec.ttlSecondsAfterFinished in body should be greater than or equal to 1"},
	}
	for name, tc := range cases {
		task := &druidv1alpha1.EtcdOpsTask{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "invalid"},
			Spec:       druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())}},
		}
		tc.mutate(task)
		err := env.Client.Create(ctx, task)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: want 422 Invalid, got %v", name, err)
		g.Expect(err.Error()).To(ContainSubstring(tc.message), name)
	}

	// The upstream defaults; the task is then rejected (there is no Etcd), which does not matter here.
	task := &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec:       druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: ptr.To(fullSnapshot())}},
	}
	g.Expect(env.Client.Create(ctx, task)).To(Succeed())
	g.Expect(task.Spec.TTLSecondsAfterFinished).To(Equal(ptr.To[int32](3600)))
	g.Expect(task.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull).To(Equal(ptr.To(druidv1alpha1.DefaultOnDemandSnapshotTimeoutFull)))
	g.Expect(task.Spec.Config.OnDemandSnapshot.TimeoutSecondsDelta).To(Equal(ptr.To[int32](60)))

	for name, tc := range map[string]struct {
		mutate  func(*druidv1alpha1.EtcdOpsTask)
		message string
	}{
		"config": {func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
		}, "config is immutable"},
		"etcd": {func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.EtcdName = ptr.To("etcd-events") }, "etcdName is immutable"},
		"ttl":  {func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) }, "ttlSecondsAfterFinished is immutable"},
	} {
		g.Eventually(func(g Gomega) {
			current := stored(task)(g)
			tc.mutate(current)
			err := env.Client.Update(ctx, current)
			g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "retry on a conflict with druid's status writes")
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: want 422 Invalid, got %v", name, err)
			g.Expect(strings.Contains(err.Error(), tc.message)).To(BeTrue(), "%s: %v", name, err)
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	}
}

// Tasks of one kind of one Etcd start at most once per minimum interval, tasks of any kind at most once
// per half of it: a second full snapshot right after the first, and a delta snapshot right after it, are
// Rejected with ERR_TOO_FREQUENT naming the earlier task, both limits and when the next may run, without
// reaching the sidecar; a task of another Etcd runs. (TestStartsAllowed walks the limits through time.)
func TestTasksAreRateLimitedPerEtcd(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := sidecarstandin.StartHandler(t, env.Client, &sidecars, ns, func(w http.ResponseWriter, r *http.Request) { snapshotJSON(w, r, 9) })
	createEtcd(t, ns, "etcd-main")
	createEtcd(t, ns, "etcd-events")

	waitForState(t, createTask(t, ns, "full-1", "etcd-main", fullSnapshot(), 3600), druidv1alpha1.TaskStateSucceeded)
	again := waitForState(t, createTask(t, ns, "full-2", "etcd-main", fullSnapshot(), 3600), druidv1alpha1.TaskStateRejected)
	expectError(g, again, etcdopstask.ErrTooFrequent, "EtcdOpsTask full-1 started a full snapshot of Etcd etcd-main at ")
	g.Expect(again.Status.LastErrors[len(again.Status.LastErrors)-1].Description).To(ContainSubstring(
		"an Etcd starts at most one task per " + (minInterval / 2).String() + " and one of each kind per " + minInterval.String()))
	g.Expect(sidecar.Requests()).To(Equal(1), "the rejected task did not ask for a snapshot")

	delta := waitForState(t, createTask(t, ns, "delta", "etcd-main", druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeDelta}, 3600), druidv1alpha1.TaskStateRejected)
	expectError(g, delta, etcdopstask.ErrTooFrequent, "EtcdOpsTask full-1 started a full snapshot of Etcd etcd-main at ")
	waitForState(t, createTask(t, ns, "events-full", "etcd-events", fullSnapshot(), 3600), druidv1alpha1.TaskStateSucceeded)
	g.Expect(sidecar.Requests()).To(Equal(2))
}
