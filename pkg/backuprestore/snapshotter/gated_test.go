package snapshotter_test

import (
	"context"
	"io"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
)

// gatedUploads passes a real store through but asks a gate before every delta upload (Save of a delta)
// or full snapshot upload (SaveStaged, SaveExpected), where one is set: the upload fails with what the
// gate returns, and waits while the gate waits.
type gatedUploads struct {
	snapstore.SnapStore
	stager              snapstore.StagedSaver
	deltaGate, fullGate func(ctx context.Context) error
}

func gated(store *backuptest.Store, g gatedUploads) *backuptest.Store {
	g.SnapStore, g.stager = store.SnapStore, store.SnapStore.(snapstore.StagedSaver)
	wrapped := *store
	wrapped.SnapStore = &g
	return &wrapped
}

// gateDeltas gates every delta upload of store.
func gateDeltas(store *backuptest.Store, gate func(ctx context.Context) error) *backuptest.Store {
	return gated(store, gatedUploads{deltaGate: gate})
}

// gateFulls gates every full snapshot upload of store.
func gateFulls(store *backuptest.Store, gate func(ctx context.Context) error) *backuptest.Store {
	return gated(store, gatedUploads{fullGate: gate})
}

// hold is a gate that holds every upload until release is called, or its context ends; entered receives
// once an upload waits.
func hold() (gate func(ctx context.Context) error, entered <-chan struct{}, release func()) {
	waiting, released := make(chan struct{}, 1), make(chan struct{})
	gate = func(ctx context.Context) error {
		select {
		case waiting <- struct{}{}:
		default:
		}
		select {
		case <-released:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return gate, waiting, func() { close(released) }
}

func pass(ctx context.Context, gate func(context.Context) error) error {
	if gate == nil {
		return nil
	}
	return gate(ctx)
}

func (g *gatedUploads) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	if snap.Kind == snapshot.KindIncr {
		if err := pass(ctx, g.deltaGate); err != nil {
			return err
		}
	}
	return g.SnapStore.Save(ctx, snap, r)
}

func (g *gatedUploads) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if err := pass(ctx, g.fullGate); err != nil {
		return nil, err
	}
	return g.stager.SaveStaged(ctx, r, name)
}

func (g *gatedUploads) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if err := pass(ctx, g.fullGate); err != nil {
		return nil, err
	}
	return g.stager.SaveExpected(ctx, r, expected, name)
}
