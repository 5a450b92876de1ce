package backuptest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// Clock is a settable clock for snapshot names (and so the ages copy and garbage collection see).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock.
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}

// Backup starts a snapshotter on store whose snapshots are taken on demand only (no schedule, a delta
// period of an hour, no garbage collection), named by clock (nil: real time), compressed with c.
// It takes the initial full snapshot on start.
func Backup(t *testing.T, cli *clientv3.Client, store snapstore.SnapStore, clock *Clock, c snapshot.Compression) *snapshotter.Snapshotter {
	t.Helper()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod, cfg.Compression = "", time.Hour, 0, c
	opts := snapshotter.Options{Config: cfg, Client: cli, Store: store, Log: logr.Discard()}
	if clock != nil {
		opts.Now = clock.Now
	}
	s, err := snapshotter.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TakeDelta cuts a delta now and fails the test unless one was written.
func TakeDelta(t *testing.T, s *snapshotter.Snapshotter) *snapshot.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := s.TakeDelta(ctx)
	if err != nil || d == nil {
		t.Fatalf("TakeDelta = %v, %v; want a delta", d, err)
	}
	return d
}

// TakeFull takes a full snapshot now.
func TakeFull(t *testing.T, s *snapshotter.Snapshotter, final bool) *snapshot.Snapshot {
	t.Helper()
	f, err := s.TakeFull(t.Context(), final)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Churn writes round's share of a varied history: new keys, overwrites of earlier rounds' keys,
// deletes, a multi-key transaction, and a key attached to a long lease. It returns the revision after.
func Churn(t *testing.T, cli *clientv3.Client, round int) int64 {
	t.Helper()
	ctx := t.Context()
	for i := range 20 {
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/r%d/k%02d", round, i), fmt.Sprintf("value-%d-%d", round, i)); err != nil {
			t.Fatal(err)
		}
	}
	if round > 0 {
		for i := range 5 {
			if _, err := cli.Put(ctx, fmt.Sprintf("/registry/r%d/k%02d", round-1, i), fmt.Sprintf("overwritten-%d", round)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cli.Delete(ctx, fmt.Sprintf("/registry/r%d/k1", round-1), clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Txn(ctx).Then(
		clientv3.OpPut(fmt.Sprintf("/txn/%d/a", round), "a"), clientv3.OpPut(fmt.Sprintf("/txn/%d/b", round), "b"),
	).Commit(); err != nil {
		t.Fatal(err)
	}
	lease, err := cli.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Put(ctx, fmt.Sprintf("/leased/%d", round), "x", clientv3.WithLease(lease.ID))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}
