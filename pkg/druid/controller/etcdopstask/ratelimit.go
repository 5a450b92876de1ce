package etcdopstask

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The rate limit of EtcdOpsTasks, per Etcd: a task of one kind (a full, a final full, a delta snapshot)
// starts at most once per MinInterval, and a task of any kind at most once per half of it. The kind's
// interval keeps the expensive full snapshots to one per interval; the Etcd's bound keeps tasks of
// alternating kinds from adding up (full, delta, final full would otherwise be three snapshots within
// seconds, every interval): at most two snapshots per MinInterval per Etcd, e.g. one full and one delta.
// Half the interval, not the whole, so that a delta and a full snapshot a little more than half a
// minute apart (the default 1 min) both run: an operator's or a test's alternating tasks are not refused
// for asking twice a minute, a loop creating tasks is still no snapshot loop.

// taskStart is when a task of a kind of an Etcd started, as the rate limit sees it.
type taskStart struct {
	// task names the task ("(since deleted)" for a start only this druid remembers).
	task string
	etcd types.NamespacedName
	// kind is what the task asks for (describe: "a full snapshot", ...).
	kind string
	at   time.Time
}

// startKey identifies the remembered starts: one per kind of an Etcd.
type startKey struct {
	etcd types.NamespacedName
	kind string
}

// etcdInterval is the least time between the starts of two tasks of any kind of one Etcd.
func etcdInterval(minInterval time.Duration) time.Duration { return minInterval / 2 }

// tooSoon tells whether a task of kind of etcd may not start at now because of one of starts, which start
// keeps it back, and from when it may start (when every start in its way is far enough behind).
func tooSoon(starts []taskStart, etcd types.NamespacedName, kind string, now time.Time, minInterval time.Duration) (taskStart, time.Time, bool) {
	var blocking taskStart
	var allowedFrom time.Time
	for _, s := range starts {
		if s.etcd != etcd {
			continue
		}
		window := etcdInterval(minInterval)
		if s.kind == kind {
			window = minInterval
		}
		if until := s.at.Add(window); now.Before(until) && until.After(allowedFrom) {
			blocking, allowedFrom = s, until
		}
	}
	return blocking, allowedFrom, !allowedFrom.IsZero()
}

// recordStart remembers that a task of kind of etcd started at now, for tasks deleted (TTL) before the
// intervals passed, and forgets the starts that no longer keep anything back (older than MinInterval,
// the longer window), so that the memory holds no more than the starts of the last MinInterval: deleted
// Etcds and kinds not asked for again leave nothing behind.
func recordStart(started map[startKey]time.Time, etcd types.NamespacedName, kind string, now time.Time, minInterval time.Duration) {
	for k, at := range started {
		if now.Sub(at) >= minInterval {
			delete(started, k)
		}
	}
	started[startKey{etcd: etcd, kind: kind}] = now
}

// rememberedStarts lists the starts in started as taskStarts.
func rememberedStarts(started map[startKey]time.Time) []taskStart {
	starts := make([]taskStart, 0, len(started))
	for k, at := range started {
		starts = append(starts, taskStart{task: "(since deleted)", etcd: k.etcd, kind: k.kind, at: at})
	}
	return starts
}

// startOf is the start of a stored task that has one (ok false: it never started or asks for no snapshot).
func startOf(task *druidv1alpha1.EtcdOpsTask) (taskStart, bool) {
	if task.Status.StartedAt == nil || task.Spec.Config.OnDemandSnapshot == nil || task.Spec.EtcdName == nil {
		return taskStart{}, false
	}
	return taskStart{task: task.Name, etcd: types.NamespacedName{Namespace: task.Namespace, Name: ptr.Deref(task.Spec.EtcdName, "")},
		kind: describe(task.Spec.Config.OnDemandSnapshot), at: task.Status.StartedAt.Time}, true
}
