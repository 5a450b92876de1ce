package snapshotter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/robfig/cron/v3"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// retryDelay is how long the watch and the initial full snapshot wait before trying again after a
// failure (etcd or the store unavailable).
const retryDelay = 5 * time.Second

// Options are the snapshotter's collaborators.
type Options struct {
	Config Config
	// Client reaches the etcd cluster being backed up.
	Client *clientv3.Client
	// WatchClient, when set, is the delta watch's own client, dialed with WatchDialOptions to the member
	// Client reaches; nil means the watch uses Client.
	WatchClient *clientv3.Client
	// Store receives the snapshots; it must implement snapstore.StagedSaver (all stores do).
	Store snapstore.SnapStore
	// Leases is told about every stored snapshot; nil means NoLeases.
	Leases LeaseUpdater
	// Metrics; nil means unregistered metrics.
	Metrics *Metrics
	Log     logr.Logger
	// Now is the clock for names and garbage collection; nil means time.Now.
	Now func() time.Time
}

// Snapshotter takes and collects snapshots of one cluster. It is created per leadership term:
// Start it when this sidecar becomes the backup leader, Stop it when it no longer is.
type Snapshotter struct {
	cfg Config
	cli *clientv3.Client
	// watchCli carries the delta watch (Options.WatchClient, else cli).
	watchCli *clientv3.Client
	store    snapstore.SnapStore
	stager   snapstore.StagedSaver
	leases   LeaseUpdater
	metrics  *Metrics
	// watching is true once the delta watch runs; only then is there a watch for a full snapshot to wait for.
	watching atomic.Bool
	// fullStreams holds when each full snapshot streaming from etcd now began (see FullStreamOpenSince).
	fullStreams openStreams
	log         logr.Logger
	now         func() time.Time

	// opMu serialises snapshot operations (full snapshots and delta cuts), so the revision bookkeeping
	// below changes in one place at a time.
	opMu sync.Mutex

	// bufMu guards the fields below, shared with the watch.
	bufMu      sync.Mutex
	lastRev    int64           // last revision in the store
	fullRev    int64           // revision of the latest full snapshot in the store
	watchedRev int64           // every revision up to here is stored or buffered
	events     []bufferedEvent // revisions lastRev+1..watchedRev, in order
	bufSize    int64
	storing    int64         // size of the events a cut is storing (memory.go)
	room       chan struct{} // closed (and replaced) when the events held drop under the memory limit
	progress   chan struct{} // closed (and replaced) whenever watchedRev advances
	reported   *pendingKinds // the snapshot_required gauges; nil before the first report

	// gcMu serialises garbage collections (the schedule's and a caller's) and guards gcLocks and
	// lastSweep.
	gcMu      sync.Mutex
	gcLocks   gcLocks
	lastSweep time.Time // of abandoned uploads (sweep.go); zero before the first

	cutNow chan struct{} // the buffer reached the cut threshold (memory.go)
	cancel context.CancelFunc
	cron   *cron.Cron
	wg     sync.WaitGroup
}

type bufferedEvent struct {
	ev       *mvccpb.Event
	observed time.Time
}

// New validates the configuration and prepares a snapshotter; nothing runs before Start.
func New(opts Options) (*Snapshotter, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("snapshotter configuration: %w", err)
	}
	stager, ok := opts.Store.(snapstore.StagedSaver)
	if !ok {
		return nil, fmt.Errorf("store %T cannot save full snapshots named after their contents (no StagedSaver)", opts.Store)
	}
	s := &Snapshotter{
		cfg: opts.Config, cli: opts.Client, watchCli: opts.WatchClient, store: opts.Store, stager: stager,
		leases: opts.Leases, metrics: opts.Metrics, log: opts.Log.WithName("snapshotter"), now: opts.Now,
		progress: make(chan struct{}), room: make(chan struct{}), cutNow: make(chan struct{}, 1), gcLocks: gcLocks{},
	}
	if s.watchCli == nil {
		s.watchCli = s.cli
	}
	if s.leases == nil {
		s.leases = NoLeases{}
	}
	if s.metrics == nil {
		s.metrics = NewMetrics(nil)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Start continues the backups from the store's last revision (taking a full snapshot first if the
// store has no usable snap stream) and starts the full-snapshot schedule, the delta watch and
// garbage collection. It returns once the loops run; they end with ctx or Stop.
func (s *Snapshotter) Start(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(ctx)
	if err := s.resume(ctx); err != nil {
		s.cancel()
		return err
	}
	if s.cfg.Schedule != "" {
		s.cron = cron.New(cron.WithLocation(time.UTC))
		if _, err := s.cron.AddFunc(s.cfg.Schedule, func() { _, _ = s.TakeFull(ctx, false) }); err != nil {
			s.cancel()
			return fmt.Errorf("full snapshot schedule %q: %w", s.cfg.Schedule, err)
		}
		s.cron.Start()
	}
	if s.cfg.DeltaSnapshotPeriod > 0 {
		s.watching.Store(true)
		s.wg.Go(func() { s.watchLoop(ctx) })
		s.wg.Go(func() { s.deltaLoop(ctx) })
	}
	if s.cfg.GarbageCollectionPeriod > 0 {
		s.wg.Go(func() { s.gcLoop(ctx) })
	}
	return nil
}

// Stop ends every loop and waits for a running snapshot to finish or abort.
func (s *Snapshotter) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.cron != nil {
		<-s.cron.Stop().Done()
	}
	s.wg.Wait()
}

// resume learns the store's last revision. Without a full snapshot, or with a stream that has a gap,
// there is nothing a restore could build on: a full snapshot is taken before anything else.
func (s *Snapshotter) resume(ctx context.Context) error {
	snaps, err := s.store.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the store to resume backups: %w", err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil && !errors.Is(err, snapshot.ErrRevisionGap) {
		return err
	}
	if err == nil && stream.Full != nil {
		s.setStoredFull(stream.Full.LastRevision)
		s.setStored(stream.LastRevision())
		s.metrics.resumed(stream.Full, stream.Deltas)
		s.log.Info("Continuing backups from the store", "revision", stream.LastRevision(), "snapshot", stream.Full.SnapName)
		return nil
	}
	reason := "no full snapshot"
	if err != nil {
		reason = err.Error()
	}
	s.log.Info("No usable snap stream in the store, taking a full snapshot first", "reason", reason)
	for {
		s.opMu.Lock()
		_, err := s.takeFullLocked(ctx, false)
		s.opMu.Unlock()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryDelay):
		}
	}
}

// LastRevision is the last revision the store holds according to this snapshotter.
func (s *Snapshotter) LastRevision() int64 {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	return s.lastRev
}

// WatchedRevision is the revision up to which the delta watch delivered every event: each one is stored
// or buffered for the next delta. Together with LastRevision it shows how much a Flush would store.
func (s *Snapshotter) WatchedRevision() int64 {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	return s.watchedRev
}

// setStored records that the store holds every revision up to rev and drops buffered events it covers.
func (s *Snapshotter) setStored(rev int64) {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	s.lastRev = max(s.lastRev, rev)
	drop := 0
	for drop < len(s.events) && s.events[drop].ev.Kv.ModRevision <= s.lastRev {
		s.bufSize -= eventSize(s.events[drop].ev)
		drop++
	}
	s.events = s.events[drop:]
	s.advanceWatched(s.lastRev)
	s.reportPending()
	s.makeRoom()
}

// setStoredFull records the revision of the latest full snapshot in the store.
func (s *Snapshotter) setStoredFull(rev int64) {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	s.fullRev = max(s.fullRev, rev)
	s.reportPending()
}

// reportPending exports which kinds of snapshot are behind what the watch delivered; bufMu must be held.
// The gauges are set when that changes, not on every watch response.
func (s *Snapshotter) reportPending() {
	now := pendingKinds{full: s.watchedRev > s.fullRev, incr: len(s.events) > 0}
	if s.reported != nil && *s.reported == now {
		return
	}
	s.reported = &now
	s.metrics.pending(now.full, now.incr)
}

// pendingKinds is what reportPending exported last.
type pendingKinds struct{ full, incr bool }

// advanceWatched moves watchedRev forward and wakes waiters; bufMu must be held.
func (s *Snapshotter) advanceWatched(rev int64) {
	if rev > s.watchedRev {
		s.watchedRev = rev
		close(s.progress)
		s.progress = make(chan struct{})
	}
}

func (s *Snapshotter) gcLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.GarbageCollectionPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.CollectGarbage(ctx); err != nil {
				s.log.Error(err, "Garbage collection failed")
			}
		}
	}
}
