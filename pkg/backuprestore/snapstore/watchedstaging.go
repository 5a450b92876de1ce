package snapstore

import (
	"context"
	"fmt"
	"io"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// The watched store is a StagedSaver like every store of this package (the snapshotter needs one for
// full snapshots); both uploads behave as Save does across a reopen.

// SaveStaged implements StagedSaver.
func (w *watchedStore) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return uploadOnCurrent(w, func(s SnapStore) (*snapshot.Snapshot, error) {
		stager, err := stagerOf(s)
		if err != nil {
			return nil, err
		}
		return stager.SaveStaged(ctx, r, name)
	})
}

// SaveExpected implements StagedSaver.
func (w *watchedStore) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return uploadOnCurrent(w, func(s SnapStore) (*snapshot.Snapshot, error) {
		stager, err := stagerOf(s)
		if err != nil {
			return nil, err
		}
		return stager.SaveExpected(ctx, r, expected, name)
	})
}

func stagerOf(s SnapStore) (StagedSaver, error) {
	stager, ok := s.(StagedSaver)
	if !ok {
		return nil, fmt.Errorf("store %T cannot save full snapshots named after their contents (no StagedSaver)", s)
	}
	return stager, nil
}
