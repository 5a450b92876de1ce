package snapstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// DefaultSecretPollInterval is how often a watched store reads its mounted backup secret. The kubelet
// itself only refreshes mounted secrets on its sync period (a minute by default), so a few seconds more
// cost nothing against the rotation, and one digest of a handful of small files is cheap.
const DefaultSecretPollInterval = 5 * time.Second

// maxReopenBackoff caps the wait between failed reopens with the same secret (see watch).
const maxReopenBackoff = 5 * time.Minute

// ErrClosed reports an operation on a watched store after its Close.
var ErrClosed = errors.New("the backup store is closed")

// reopenCheckTimeout bounds the listing that proves new credentials before the store switches to them.
const reopenCheckTimeout = 30 * time.Second

// WatchOptions tunes OpenWatched.
type WatchOptions struct {
	// PollInterval is how often the secret is compared with the one the store was opened with; 0 means
	// DefaultSecretPollInterval.
	PollInterval time.Duration
}

// OpenWatched opens the store cfg describes, like New, and keeps it opened with the credentials currently
// mounted in cfg.SecretDir: when the backup secret's content changes (a credential rotation), the store
// is reopened with the new secret and the old one closed once the operations still using it are done,
// without a restart of the process. Without a SecretDir (Local, or credentials only from the
// environment, which cannot change under a running process) it is New.
//
// The secret is polled: every PollInterval its files are read and hashed (secretDigest), and a digest
// that differs from the one in use triggers a reopen. Polling was chosen over inotify (fsnotify): the
// kubelet swaps the `..data` symlink, so a watch on the directory sees a rename of a link and none of
// the key files change in place; the events would only ever be a hint to compare content, which the
// poll does anyway, without the watch's limits (inotify instances per user) or its lost events to
// worry about; and the kubelet's own refresh delay dwarfs the poll interval.
//
// A reopen only replaces the store once the new one has listed the snapshots: a secret read half-way
// through being written, or keys the provider does not accept yet, leave the old store in use; the
// failure is logged (errors name keys and directories, never values) and the reopen retried with an
// exponential backoff (PollInterval doubled per failure, at most maxReopenBackoff), at once when the
// secret changes again.
//
// Only credentials change in place. The store's location (provider, container, prefix and what of the
// secret decides the account, endpoint or region, see storeLocation) is recorded when it is opened; a
// changed secret that resolves to another location (say a new bucketName, or for S3 another endpoint or
// region) is refused: the old store stays in use, an error names the fields that changed, and the
// reopen is retried like a failed one. Moving the store under a running member would put its next
// deltas where no full snapshot lies under them while the backup still looks healthy; moving it takes
// a restart of the pod (which starts from a full snapshot).
//
// After Close every operation fails with ErrClosed.
func OpenWatched(ctx context.Context, cfg Config, opts WatchOptions, log logr.Logger) (SnapStore, error) {
	if cfg.SecretDir == "" {
		return New(ctx, cfg, log)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultSecretPollInterval
	}
	digest, err := secretDigest(cfg.SecretDir)
	if err != nil {
		return nil, err
	}
	location, err := resolveLocation(cfg)
	if err != nil {
		return nil, err
	}
	store, err := New(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	w := &watchedStore{cfg: cfg, storeLog: log, log: log.WithName("secret-watch"), done: make(chan struct{}),
		current: &generation{store: store, digest: digest, location: location}}
	var watchCtx context.Context
	watchCtx, w.stop = context.WithCancel(context.WithoutCancel(ctx))
	go w.watch(watchCtx, opts.PollInterval)
	return w, nil
}

// watchedStore is the SnapStore of OpenWatched: every operation runs on the generation of the store that
// is current when it starts, and that generation stays open until its last operation ends.
type watchedStore struct {
	cfg      Config
	storeLog logr.Logger // given to every store opened, as New would have it
	log      logr.Logger
	stop     context.CancelFunc
	done     chan struct{} // closed when watch returns

	mu      sync.Mutex
	current *generation
	closed  bool // by Close: no operation starts any more
}

// generation is the store opened from one content of the secret.
type generation struct {
	store    SnapStore
	digest   [sha256.Size]byte
	location storeLocation
	number   int // 0 for the store opened at start, counted up by every reopen; for the logs
	inUse    int
	retired  bool
	closed   bool // store.Close was called (once, by whoever set this under the lock)
}

var (
	_ SnapStore   = (*watchedStore)(nil)
	_ StagedSaver = (*watchedStore)(nil)
)

// acquire returns the current generation, held open until release; after Close, ErrClosed.
func (w *watchedStore) acquire() (*generation, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	w.current.inUse++
	return w.current, nil
}

// closeDue tells whether g is to be closed now (retired, unused, not closed yet) and marks it closed if
// so: the caller then closes it, outside the lock. w.mu must be held.
func closeDue(g *generation) bool {
	if !g.retired || g.inUse > 0 || g.closed {
		return false
	}
	g.closed = true
	return true
}

// release ends one operation on g and closes g when it was its last and g is no longer current.
func (w *watchedStore) release(g *generation) {
	w.mu.Lock()
	g.inUse--
	closeNow := closeDue(g)
	w.mu.Unlock()
	if closeNow {
		w.closeGeneration(g)
	}
}

// replaced tells whether a newer generation than g is current: an operation that failed on g may
// succeed on it.
func (w *watchedStore) replaced(g *generation) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current != g
}

// swap makes next current and retires the previous generation, closing it now if nothing uses it.
func (w *watchedStore) swap(next *generation) {
	w.mu.Lock()
	prev := w.current
	next.number = prev.number + 1
	w.current = next
	prev.retired = true
	closeNow := closeDue(prev)
	w.mu.Unlock()
	if closeNow {
		w.closeGeneration(prev)
	}
}

func (w *watchedStore) closeGeneration(g *generation) {
	if err := g.store.Close(); err != nil {
		w.log.Error(err, "Closing the store opened with the previous backup secret", "generation", g.number)
	}
}

// retryOnReplaced runs op on the current generation and, when it fails while a reopen replaced that
// generation, once more on the new one: the failure may be the old credentials' revocation. For
// operations that can simply be repeated (List, Fetch, Delete).
func retryOnReplaced[T any](w *watchedStore, op func(SnapStore) (T, error)) (T, error) {
	g, err := w.acquire()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := op(g.store)
	if err == nil || !w.replaced(g) {
		w.release(g)
		return v, err
	}
	w.release(g)
	if g, err = w.acquire(); err != nil {
		var zero T
		return zero, err
	}
	defer w.release(g)
	return op(g.store)
}

// List implements SnapStore.
func (w *watchedStore) List(ctx context.Context) ([]*snapshot.Snapshot, error) {
	return retryOnReplaced(w, func(s SnapStore) ([]*snapshot.Snapshot, error) { return s.List(ctx) })
}

// Delete implements SnapStore.
func (w *watchedStore) Delete(ctx context.Context, snap *snapshot.Snapshot) error {
	_, err := retryOnReplaced(w, func(s SnapStore) (struct{}, error) { return struct{}{}, s.Delete(ctx, snap) })
	return err
}

// Fetch implements SnapStore. The generation that opened the object stays open until the reader is
// closed.
func (w *watchedStore) Fetch(ctx context.Context, snap *snapshot.Snapshot) (io.ReadCloser, error) {
	g, err := w.acquire()
	if err != nil {
		return nil, err
	}
	rc, err := g.store.Fetch(ctx, snap)
	if err != nil && w.replaced(g) {
		w.release(g)
		if g, err = w.acquire(); err != nil {
			return nil, err
		}
		rc, err = g.store.Fetch(ctx, snap)
	}
	if err != nil {
		w.release(g)
		return nil, err
	}
	return &generationReader{ReadCloser: rc, release: sync.OnceFunc(func() { w.release(g) })}, nil
}

// generationReader releases its generation when closed.
type generationReader struct {
	io.ReadCloser
	release func()
}

func (r *generationReader) Close() error {
	defer r.release()
	return r.ReadCloser.Close()
}

// Save implements SnapStore. An upload runs to its end on the store it started on, which stays open
// for it even if the secret changes meanwhile. It cannot be repeated here (r is consumed); when it
// fails after a reopen, the error says so, and the caller's next attempt uses the new store: the
// snapshotter keeps a failed delta's events and stores them with the next delta; a failed scheduled
// full snapshot is taken again at its next schedule, the deltas keeping the backup current meanwhile.
func (w *watchedStore) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	_, err := uploadOnCurrent(w, func(s SnapStore) (struct{}, error) { return struct{}{}, s.Save(ctx, snap, r) })
	return err
}

// uploadOnCurrent runs an upload on the current generation, held open until the upload ends, and
// explains a failure that a reopen may have caused (see Save).
func uploadOnCurrent[T any](w *watchedStore, upload func(SnapStore) (T, error)) (T, error) {
	g, err := w.acquire()
	if err != nil {
		var zero T
		return zero, err
	}
	defer w.release(g)
	v, err := upload(g.store)
	if err != nil && w.replaced(g) {
		return v, fmt.Errorf("%w (the backup secret changed during the upload; the next attempt uses the new credentials)", err)
	}
	return v, err
}

// Close stops watching the secret and closes the current store once its operations are done; no
// operation starts afterwards (ErrClosed). Closing again does nothing.
func (w *watchedStore) Close() error {
	w.stop()
	<-w.done
	w.mu.Lock()
	w.closed = true
	g := w.current
	g.retired = true
	closeNow := closeDue(g)
	w.mu.Unlock()
	if closeNow {
		return g.store.Close()
	}
	return nil
}

// watch polls the secret until ctx ends. Reading and hashing the secret is cheap and done on every
// poll; a reopen (a store opened, a listing, an error logged when it fails) is retried with backoff.
func (w *watchedStore) watch(ctx context.Context, interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	b := reopenBackoff{base: interval, max: maxReopenBackoff}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		digest, err := secretDigest(w.cfg.SecretDir)
		if err == nil {
			w.mu.Lock()
			unchanged := w.current.digest == digest
			w.mu.Unlock()
			if unchanged {
				b.reset()
				continue
			}
		}
		now := time.Now()
		if !b.due(digest, now) {
			continue
		}
		if err == nil {
			err = w.reopen(ctx, digest)
		}
		if err == nil {
			b.reset()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		retryIn := b.failed(digest, now)
		var moved *locationChangedError
		if errors.As(err, &moved) {
			w.log.Error(err, "Backup secret changed to another store location, refused; still using the previous store, restart the pod to move it",
				"changed", moved.changes, "retryIn", retryIn, "failedAttempts", b.failures)
			continue
		}
		w.log.Error(err, "Backup secret changed but the store could not be reopened with it; still using the previous credentials, retrying",
			"retryIn", retryIn, "failedAttempts", b.failures)
	}
}

// reopenBackoff spaces the reopens of one content of the secret that keep failing: base after the
// first failure, doubled after each further one, at most max. A secret with another digest is tried at
// once, and counts from the start.
type reopenBackoff struct {
	base, max time.Duration
	failures  int
	digest    [sha256.Size]byte // of the secret the failures were with
	next      time.Time         // when to try that secret again
}

// due tells whether a reopen with the secret of digest is to be attempted at now.
func (b *reopenBackoff) due(digest [sha256.Size]byte, now time.Time) bool {
	return b.failures == 0 || digest != b.digest || !now.Before(b.next)
}

// failed records a failed attempt at now with the secret of digest and returns the wait until the next.
func (b *reopenBackoff) failed(digest [sha256.Size]byte, now time.Time) time.Duration {
	if digest != b.digest {
		b.failures = 0
	}
	b.failures++
	b.digest = digest
	d := b.base
	for i := 1; i < b.failures && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	b.next = now.Add(d)
	return d
}

func (b *reopenBackoff) reset() {
	*b = reopenBackoff{base: b.base, max: b.max}
}

// reopen opens the store with the secret whose digest the caller read and makes it current, unless it
// resolves to another location than the current store's (locationChangedError) or does not list. The
// secret is hashed again after the listing: should it have changed while the store was opened (which
// may then have read part of either), the new store is dropped and the next poll, seeing another
// digest, tries again at once.
func (w *watchedStore) reopen(ctx context.Context, digest [sha256.Size]byte) error {
	location, err := resolveLocation(w.cfg)
	if err != nil {
		return err
	}
	w.mu.Lock()
	current := w.current.location
	w.mu.Unlock()
	if changes := current.changesTo(location); len(changes) > 0 {
		return &locationChangedError{changes: changes}
	}
	w.log.Info("Backup secret changed, reopening the store with it", "secretDir", w.cfg.SecretDir)
	store, err := New(ctx, w.cfg, w.storeLog)
	if err != nil {
		return err
	}
	checkCtx, cancel := context.WithTimeout(ctx, reopenCheckTimeout)
	defer cancel()
	if _, err := store.List(checkCtx); err != nil {
		return errors.Join(fmt.Errorf("listing the store with the new backup secret: %w", err), store.Close())
	}
	if after, err := secretDigest(w.cfg.SecretDir); err != nil || after != digest {
		return errors.Join(errors.New("the backup secret changed again while the store was reopened with it"), err, store.Close())
	}
	next := &generation{store: store, digest: digest, location: location}
	w.swap(next)
	w.log.Info("Reopened the store with the changed backup secret", "generation", next.number, "location", location.String())
	return nil
}
