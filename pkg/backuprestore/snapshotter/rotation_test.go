package snapshotter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	clientv3 "go.etcd.io/etcd/client/v3"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// mountedSecret is a backup secret directory laid out as the kubelet mounts a secret: the keys are
// symlinks through `..data`, which points at a timestamped directory holding the values; an update
// writes a new directory and swaps `..data` atomically.
type mountedSecret struct {
	dir      string
	versions int
}

func newMountedSecret(t *testing.T, keys map[string]string) *mountedSecret {
	t.Helper()
	m := &mountedSecret{dir: t.TempDir()}
	m.update(t, keys)
	return m
}

// update publishes keys as the kubelet does: new data directory, `..data` renamed over, links for new
// keys added and links of removed keys deleted afterwards, the old data directory removed last.
func (m *mountedSecret) update(t *testing.T, keys map[string]string) {
	t.Helper()
	m.versions++
	version := fmt.Sprintf("..2026_11_26_00_00_%02d.%d", m.versions, m.versions)
	if err := os.Mkdir(filepath.Join(m.dir, version), 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(m.dir, version, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	previous, _ := os.Readlink(filepath.Join(m.dir, "..data"))
	if err := os.Symlink(version, filepath.Join(m.dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(m.dir, "..data_tmp"), filepath.Join(m.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, keep := keys[e.Name()]; !keep && !strings.HasPrefix(e.Name(), "..") {
			if err := os.Remove(filepath.Join(m.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := range keys {
		link := filepath.Join(m.dir, k)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
			t.Fatal(err)
		}
	}
	if previous != "" {
		if err := os.RemoveAll(filepath.Join(m.dir, previous)); err != nil {
			t.Fatal(err)
		}
	}
}

// logLines is a real logger's output, kept for assertions.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{})
}

func (l *logLines) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lines, func(line string) bool { return strings.Contains(line, s) })
}

func s3Keys(srv *s3server.Server, access, secret string) map[string]string {
	return map[string]string{"accessKeyID": access, "secretAccessKey": secret, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true"}
}

// openStoreAs opens the bucket with one key pair, outside the snapshotter, to look at what it stored.
func openStoreAs(t *testing.T, srv *s3server.Server, bucket, access, secret string) snapstore.SnapStore {
	t.Helper()
	store, err := snapstore.New(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket,
		Prefix: "etcd-main", SecretDir: newMountedSecret(t, s3Keys(srv, access, secret)).dir}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// takeDeltaUntil calls TakeDelta until it stores a delta or the deadline passes, and fails the test
// with the last error then.
func takeDeltaUntil(t *testing.T, s *snapshotter.Snapshotter, timeout time.Duration) *snapshot.Snapshot {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		snap, err := s.TakeDelta(ctx)
		cancel()
		if err == nil && snap != nil {
			return snap
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no delta stored within %s; last error: %v", timeout, lastErr)
	return nil
}

func putKeys(t *testing.T, cli *clientv3.Client, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := cli.Put(t.Context(), fmt.Sprintf("%s/%d", prefix, i), "value"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeltasContinueAcrossCredentialRotation rotates the store's credentials under a running
// snapshotter the way a Gardener credentials rotation does (new key pair, mounted secret swapped, old
// key pair revoked) and expects the next delta in the store without a restart. A half-written secret on
// the way must leave the old credentials in use, and no secret value may reach the logs.
func TestDeltasContinueAcrossCredentialRotation(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{IAM: true})
	const bucket = "rotation"
	srv.CreateBucket(t, bucket)
	const accessA, secretA, accessB, secretB = "key-a", "secret-of-key-a", "key-b", "secret-of-key-b"
	srv.CreateUser(t, accessA, secretA)
	secret := newMountedSecret(t, s3Keys(srv, accessA, secretA))
	var logs logLines
	store, err := snapstore.OpenWatched(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket,
		Prefix: "etcd-main", SecretDir: secret.dir}, snapstore.WatchOptions{PollInterval: 100 * time.Millisecond}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })

	cli := etcdserver.Start(t).Client(t)
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store, Log: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	putKeys(t, cli, "before", 5)
	first := takeDeltaUntil(t, s, 10*time.Second)

	// Half-written: key B without its secret. The store must stay on A and say why.
	srv.CreateUser(t, accessB, secretB)
	secret.update(t, map[string]string{"accessKeyID": accessB, "region": srv.Region, "endpoint": srv.Endpoint, "s3ForcePathStyle": "true"})
	eventually(t, 10*time.Second, "the failed reopen to be logged", func() bool { return logs.contains("could not be reopened") })
	putKeys(t, cli, "half", 5)
	half := takeDeltaUntil(t, s, 10*time.Second)

	secret.update(t, s3Keys(srv, accessB, secretB))
	srv.DeleteUser(t, accessA)
	if _, err := openStoreAs(t, srv, bucket, accessA, secretA).List(t.Context()); err == nil {
		t.Fatal("the revoked key pair A still lists the bucket")
	}
	putKeys(t, cli, "after", 5)
	after := takeDeltaUntil(t, s, 20*time.Second)

	stored, err := openStoreAs(t, srv, bucket, accessB, secretB).List(t.Context())
	if err != nil {
		t.Fatalf("listing with key pair B: %v", err)
	}
	var got []string
	for _, snap := range stored {
		got = append(got, snap.SnapName)
	}
	for _, want := range []*snapshot.Snapshot{first, half, after} {
		if !slices.Contains(got, want.SnapName) {
			t.Errorf("store listed with key pair B holds %v, want it to hold %s", got, want.SnapName)
		}
	}
	if after.StartRevision != half.LastRevision+1 {
		t.Errorf("delta after rotation starts at revision %d, want %d (no gap)", after.StartRevision, half.LastRevision+1)
	}
	for _, value := range []string{secretA, secretB} {
		if logs.contains(value) {
			t.Errorf("a log line contains a secret value")
		}
	}
}
