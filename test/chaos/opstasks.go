package chaos

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcdopstask"
)

// On-demand snapshot tasks of a run. Only onDemandSnapshot of type full (never isFinal: a final snapshot is
// for a cluster shut down on purpose and releases a waiting copy task) and delta are safe on a running
// cluster; druid rejects every other kind. The timeouts are the schema's low ends (a delta 30 s, a full
// 120 s), so that a task stuck at a frozen sidecar fails within minutes instead of eight.
const (
	opsTaskTimeoutDelta int32 = 30
	opsTaskTimeoutFull        = druidv1alpha1.MinOnDemandSnapshotTimeoutFull
	// opsTaskTTL keeps a finished task long enough to be read (every wait below is shorter), then druid
	// deletes it: a run leaves no pile of tasks.
	opsTaskTTL int32 = 900
	// faultTaskGap is the pause between the end of one task and the next while a fault lasts. It is more
	// than druid's default bound between two tasks of one Etcd (half of --etcd-ops-task-min-interval,
	// 30 s), and as the kinds alternate, a kind repeats after twice the gap plus a task: beyond the default
	// minimum interval between tasks of one kind (1 min). Shorter, druid would reject most of them as too
	// frequent.
	faultTaskGap = 31 * time.Second
	// faultTaskFirst is when the first task starts after the fault's injection began.
	faultTaskFirst = 2 * time.Second
	// opsTaskSlack is what a task may take beyond its own timeout to reach a final state once the round
	// ended: druid started again and elected (after "druid at 0"), the task admitted and run. A task not
	// final by then hangs, which fails the round.
	opsTaskSlack = 5 * time.Minute
)

// OpsTask is one EtcdOpsTask of the run and how it ended.
type OpsTask struct {
	Name string
	Type druidv1alpha1.OnDemandSnapshotType
	// DuringFault: created while the round's fault was being injected (it may fail, it must end).
	DuringFault bool
	// State is the final state, "" when none was reached within the wait.
	State druidv1alpha1.TaskState
	// Detail is the last error (code: description) of a task that did not succeed, or what druid recorded
	// as done for one that did.
	Detail string
	// EndRevision is the revision of the snapshot a successful task took (0: none named, e.g. no delta
	// because nothing changed).
	EndRevision int64
	Took        time.Duration
}

func (t OpsTask) String() string {
	when := "settled"
	if t.DuringFault {
		when = "during the fault"
	}
	state := string(t.State)
	if state == "" {
		state = "no final state"
	}
	s := fmt.Sprintf("%s %s (%s): %s after %s", t.Type, t.Name, when, state, t.Took.Round(100*time.Millisecond))
	if t.State != druidv1alpha1.TaskStateSucceeded && t.Detail != "" {
		s += ": " + t.Detail
	}
	return s
}

// opsTaskType is the type of a round's settled task: a full snapshot every fourth round, else a delta
// (full snapshots also reset the delta events compaction counts, so most tasks are deltas).
func opsTaskType(i int) druidv1alpha1.OnDemandSnapshotType {
	if i%4 == 0 {
		return druidv1alpha1.OnDemandSnapshotTypeFull
	}
	return druidv1alpha1.OnDemandSnapshotTypeDelta
}

// createOpsTask creates an on-demand snapshot task of type typ for etcd-main.
func (s *Suite) createOpsTask(ctx context.Context, typ druidv1alpha1.OnDemandSnapshotType) (*druidv1alpha1.EtcdOpsTask, error) {
	config := &druidv1alpha1.OnDemandSnapshotConfig{Type: typ}
	if typ == druidv1alpha1.OnDemandSnapshotTypeFull {
		config.TimeoutSecondsFull = ptr.To(opsTaskTimeoutFull)
	} else {
		config.TimeoutSecondsDelta = ptr.To(opsTaskTimeoutDelta)
	}
	task := &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "chaos-" + string(typ) + "-", Namespace: s.Env.Namespace},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{Config: druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: config},
			TTLSecondsAfterFinished: ptr.To(opsTaskTTL), EtcdName: ptr.To(etcd.Name(etcd.RoleMain))},
	}
	if err := s.Env.Client.Create(ctx, task); err != nil {
		return nil, fmt.Errorf("creating a %s snapshot EtcdOpsTask: %w", typ, err)
	}
	return task, nil
}

// awaitOpsTask waits up to timeout for the task's final state and describes it; a task that reaches
// none comes back with State "". Read errors (an apiserver outage) are waited out.
func (s *Suite) awaitOpsTask(ctx context.Context, task *druidv1alpha1.EtcdOpsTask, duringFault bool, timeout time.Duration) OpsTask {
	out := OpsTask{Name: task.Name, Type: task.Spec.Config.OnDemandSnapshot.Type, DuringFault: duringFault}
	err := poll(ctx, "EtcdOpsTask "+task.Name+" final", timeout, func(ctx context.Context) (string, error) {
		got := &druidv1alpha1.EtcdOpsTask{}
		if err := s.Env.Client.Get(ctx, client.ObjectKeyFromObject(task), got); apierrors.IsNotFound(err) {
			out.Detail = "deleted before it was seen final"
			return "", nil
		} else if err != nil {
			return "", err
		}
		if !got.IsCompleted() {
			return fmt.Sprintf("state %s", stateOf(got)), nil
		}
		out.State, out.Detail = *got.Status.State, taskDetail(got)
		out.EndRevision = revisionIn(got.Status.LastOperation)
		return "", nil
	})
	out.Took = time.Since(task.CreationTimestamp.Time)
	if err != nil && out.Detail == "" {
		out.Detail = err.Error()
	}
	return out
}

func stateOf(t *druidv1alpha1.EtcdOpsTask) string {
	if t.Status.State == nil {
		return "none yet"
	}
	return string(*t.Status.State)
}

// taskDetail is the last error of a task that did not succeed, or its last operation's description.
func taskDetail(t *druidv1alpha1.EtcdOpsTask) string {
	if *t.Status.State != druidv1alpha1.TaskStateSucceeded && len(t.Status.LastErrors) > 0 {
		e := t.Status.LastErrors[len(t.Status.LastErrors)-1]
		return fmt.Sprintf("%s: %s", e.Code, e.Description)
	}
	if t.Status.LastOperation != nil {
		return t.Status.LastOperation.Description
	}
	return ""
}

// settledOpsTask runs one task on the settled cluster before the fault: it must succeed. It first waits
// for druid's status.ready, which druid's admission checks and which follows the pods with a lag.
func (s *Suite) settledOpsTask(ctx context.Context, typ druidv1alpha1.OnDemandSnapshotType) (OpsTask, error) {
	if err := poll(ctx, "druid reporting etcd-main ready (status.ready)", waitTimeout, func(ctx context.Context) (string, error) {
		obj := &druidv1alpha1.Etcd{}
		if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
			return "", err
		}
		if !ptr.Deref(obj.Status.Ready, false) {
			return "status.ready is not true", nil
		}
		return "", nil
	}); err != nil {
		return OpsTask{Type: typ}, err
	}
	var got OpsTask
	for attempt := 1; ; attempt++ {
		task, err := s.createOpsTask(ctx, typ)
		if err != nil {
			return OpsTask{Type: typ}, err
		}
		got = s.awaitOpsTask(ctx, task, false, opsTaskTimeout(typ)+time.Minute)
		if !rejectedAsTooFrequent(got) || attempt == tooFrequentAttempts {
			break
		}
		// druid's rate limit: a task of the same kind ran less than its minimum interval ago (during the
		// previous fault). Waiting it out is what a user does; the rejection itself is correct behaviour.
		if err := pause(ctx, tooFrequentPause); err != nil {
			return got, err
		}
	}
	if got.State != druidv1alpha1.TaskStateSucceeded {
		return got, fmt.Errorf("EtcdOpsTask %s on the settled cluster did not succeed", got)
	}
	return got, nil
}

// A settled task that druid rejects as too frequent (ERR_TOO_FREQUENT: the same kind ran less than druid's
// --etcd-ops-task-min-interval ago, or any kind less than half of it, e.g. the fault's last task) is
// created again after tooFrequentPause, at most tooFrequentAttempts times in all.
const (
	tooFrequentPause    = 30 * time.Second
	tooFrequentAttempts = 5
)

func rejectedAsTooFrequent(t OpsTask) bool {
	return t.State == druidv1alpha1.TaskStateRejected && strings.HasPrefix(t.Detail, string(etcdopstask.ErrTooFrequent)+":")
}

func opsTaskTimeout(typ druidv1alpha1.OnDemandSnapshotType) time.Duration {
	if typ == druidv1alpha1.OnDemandSnapshotTypeFull {
		return time.Duration(opsTaskTimeoutFull) * time.Second
	}
	return time.Duration(opsTaskTimeoutDelta) * time.Second
}

// faultTasks creates tasks one after the other while a fault lasts: each waits for the previous one's
// final state, so that none is Rejected as a duplicate. stop ends the creation and waits for the last
// task's final state.
type faultTasks struct {
	s      *Suite
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	tasks   []OpsTask
	pending *druidv1alpha1.EtcdOpsTask
}

// startFaultTasks starts creating tasks shortly after the fault's injection began: deltas and full
// snapshots in turn.
func (s *Suite) startFaultTasks(ctx context.Context) *faultTasks {
	loopCtx, cancel := context.WithCancel(ctx)
	ft := &faultTasks{s: s, cancel: cancel, done: make(chan struct{})}
	go ft.run(loopCtx)
	return ft
}

func (ft *faultTasks) run(ctx context.Context) {
	defer close(ft.done)
	gap := faultTaskFirst
	for i := 1; ; i++ {
		if pause(ctx, gap) != nil {
			return
		}
		gap = faultTaskGap
		typ := druidv1alpha1.OnDemandSnapshotTypeDelta
		if i%2 == 0 {
			typ = druidv1alpha1.OnDemandSnapshotTypeFull
		}
		// Not cut off by stop: a task created unseen would stay unfinished and make the next ones duplicates.
		createCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		task, err := ft.s.createOpsTask(createCtx, typ)
		cancel()
		if err != nil {
			continue // the apiserver may be the fault; try again after the gap
		}
		ft.mu.Lock()
		ft.pending = task
		ft.mu.Unlock()
		// Until the round ends (ctx cancelled); stop waits for a task still unfinished then.
		got := ft.s.awaitOpsTask(ctx, task, true, 24*time.Hour)
		if ctx.Err() != nil {
			return
		}
		ft.mu.Lock()
		ft.tasks, ft.pending = append(ft.tasks, got), nil
		ft.mu.Unlock()
	}
}

// stop ends the creation and waits for the task still unfinished, up to its timeout and opsTaskSlack. The
// error names a task that reached no final state.
func (ft *faultTasks) stop(ctx context.Context) ([]OpsTask, error) {
	ft.cancel()
	<-ft.done
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.pending == nil {
		return ft.tasks, nil
	}
	typ := ft.pending.Spec.Config.OnDemandSnapshot.Type
	got := ft.s.awaitOpsTask(ctx, ft.pending, true, opsTaskTimeout(typ)+opsTaskSlack)
	ft.tasks = append(ft.tasks, got)
	if got.State == "" {
		return ft.tasks, fmt.Errorf("EtcdOpsTask %s: no final state %s after the round ended", got, opsTaskTimeout(typ)+opsTaskSlack)
	}
	return ft.tasks, nil
}

// opsTaskSummary is a round's tasks for the table: "2 ok", "1 ok, 1 Failed", "—".
func opsTaskSummary(tasks []OpsTask) string {
	outcomes := make([]string, 0, len(tasks))
	for _, t := range tasks {
		k := "ok"
		switch {
		case t.State == "":
			k = "hung"
		case t.State != druidv1alpha1.TaskStateSucceeded:
			k = string(t.State)
		}
		outcomes = append(outcomes, k)
	}
	return countedSummary(outcomes)
}

// takenRevision is how druid's lastOperation description of a succeeded snapshot task names the snapshot's
// revision ("took full snapshot: <name> (revision 42)", "took delta snapshot at revision 42"); upstream's
// task status has no field for it.
var takenRevision = regexp.MustCompile(`revision (\d+)`)

// revisionIn is the revision a succeeded task's lastOperation names, 0 when it names none.
func revisionIn(op *druidv1alpha1.LastOperation) int64 {
	if op == nil {
		return 0
	}
	m := takenRevision.FindStringSubmatch(op.Description)
	if m == nil {
		return 0
	}
	revision, _ := strconv.ParseInt(m[1], 10, 64)
	return revision
}
