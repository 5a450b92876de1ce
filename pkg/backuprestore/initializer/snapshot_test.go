package initializer

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
)

// startSnapshotter runs a snapshotter whose deltas are cut on demand only.
func startSnapshotter(t *testing.T, cli *clientv3.Client, store *backuptest.Store) *snapshotter.Snapshotter {
	t.Helper()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store.SnapStore, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func takeDelta(t *testing.T, s *snapshotter.Snapshotter) *snapshot.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := s.TakeDelta(ctx)
	if err != nil || d == nil {
		t.Fatalf("TakeDelta = %v, %v; want a delta", d, err)
	}
	return d
}
