package snapstore

import (
	"context"
	"errors"
	"io"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// ErrReadOnly reports a write to a store opened read-only (ReadOnly).
var ErrReadOnly = errors.New("the store is read-only here")

// ReadOnly wraps s so that Save and Delete fail with ErrReadOnly. It guards stores that belong to another
// cluster, such as the source of a point-in-time restore: whatever code path ends up holding one, its
// backups cannot be changed through it.
func ReadOnly(s SnapStore) SnapStore { return readOnly{s} }

type readOnly struct{ s SnapStore }

func (r readOnly) List(ctx context.Context) ([]*snapshot.Snapshot, error) { return r.s.List(ctx) }

func (r readOnly) Fetch(ctx context.Context, snap *snapshot.Snapshot) (io.ReadCloser, error) {
	return r.s.Fetch(ctx, snap)
}

func (readOnly) Save(context.Context, *snapshot.Snapshot, io.Reader) error { return ErrReadOnly }

func (readOnly) Delete(context.Context, *snapshot.Snapshot) error { return ErrReadOnly }

func (r readOnly) Close() error { return r.s.Close() }
