package snapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// SnapStore is where the snapshots of one etcd cluster live: the objects below one prefix of one
// container.
type SnapStore interface {
	// List returns every snapshot of the v2 and legacy v1 layouts, sorted by last revision. Objects
	// whose names are not snapshot names are ignored.
	List(ctx context.Context) ([]*snapshot.Snapshot, error)
	// Fetch opens a snapshot's stored (still compressed) contents. A missing object is ErrNotFound.
	Fetch(ctx context.Context, snap *snapshot.Snapshot) (io.ReadCloser, error)
	// Save uploads r as the snapshot, streaming: the object appears only once r is exhausted and
	// the upload complete; if r or the upload fails, no object (partial or otherwise) is left.
	// Only the v2 layout can be written.
	Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error
	// Delete removes a snapshot; deleting a missing one succeeds, so that two garbage collectors
	// (an old and a new backup leader) do not fail each other.
	Delete(ctx context.Context, snap *snapshot.Snapshot) error
	// Close releases the provider's clients.
	Close() error
}

// ErrNotFound reports a snapshot that is not in the store.
var ErrNotFound = errors.New("snapshot not found in store")

// ErrReadOnlyLayout reports an attempt to write a snapshot of the legacy v1 layout.
var ErrReadOnlyLayout = errors.New("the v1 layout is read-only")

// ErrLocked reports a snapshot the store keeps against deletion: an object under an S3 Object Lock
// retention or legal hold (immutable backups). It is not a failure of the caller: the snapshot can be
// deleted once its retention ends. The error is a *LockedError where the store knows more.
var ErrLocked = errors.New("snapshot is locked by the store's retention")

// LockedError is ErrLocked with what the store read of the lock.
type LockedError struct {
	// Until is when the retention ends; zero when unknown (a legal hold, or a refusal without a date).
	Until time.Time
	// Lock describes the lock for logs, e.g. "GOVERNANCE retention".
	Lock string
}

func (e *LockedError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("%v: %s", ErrLocked, e.Lock)
	}
	return fmt.Sprintf("%v: %s until %s", ErrLocked, e.Lock, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }
