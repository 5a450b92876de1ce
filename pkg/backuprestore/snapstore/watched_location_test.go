package snapstore

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// capturedLogs keeps a logger's lines for assertions.
type capturedLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *capturedLogs) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{})
}

// count is the number of lines holding all of parts.
func (l *capturedLogs) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			n++
		}
	}
	return n
}

func (l *capturedLogs) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func currentGeneration(w *watchedStore) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current.number
}

// saveDelta stores a small delta snapshot through s.
func saveDelta(t *testing.T, s SnapStore, start int64) *snapshot.Snapshot {
	t.Helper()
	snap := snapshot.NewIncr(start, start+1, time.Now(), snapshot.CompressionNone)
	if err := s.Save(t.Context(), snap, bytes.NewReader([]byte("delta"))); err != nil {
		t.Fatalf("saving %s: %v", snap.SnapName, err)
	}
	return snap
}

// namesIn lists the snapshots of bucket as the root user sees them.
func namesIn(t *testing.T, srv *s3server.Server, bucket string) []string {
	t.Helper()
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey,
		"region": srv.Region, "endpoint": srv.Endpoint, "s3ForcePathStyle": "true"})
	store, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket, Prefix: "p", SecretDir: dir}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	snaps, err := store.List(t.Context())
	if err != nil {
		t.Fatalf("listing bucket %s: %v", bucket, err)
	}
	var names []string
	for _, s := range snaps {
		names = append(names, s.SnapName)
	}
	return names
}

// TestWatchedStoreRefusesRotationToAnotherLocation opens the store on the secret's bucketName (no
// --store-container, as Gardener deploys it) and rotates the secret three times: to another bucketName
// and to another endpoint, both refused (the old store stays current and deltas keep landing in the
// old bucket; the error names the changed field and no credential), then to a new key pair only, which
// is accepted and keeps the bucket.
func TestWatchedStoreRefusesRotationToAnotherLocation(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{IAM: true})
	srv.CreateBucket(t, "home")
	srv.CreateBucket(t, "elsewhere")
	srv.CreateUser(t, "key-a", "secret-of-key-a")
	srv.CreateUser(t, "key-b", "secret-of-key-b")
	keys := func(access, secret, bucket, endpoint string) map[string]string {
		return map[string]string{"accessKeyID": access, "secretAccessKey": secret, "region": srv.Region,
			"endpoint": endpoint, "s3ForcePathStyle": "true", "bucketName": bucket}
	}
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", keys("key-a", "secret-of-key-a", "home", srv.Endpoint))
	var logs capturedLogs
	opened, err := OpenWatched(t.Context(), Config{Provider: druidv1alpha1.StorageProviderS3, Prefix: "p", SecretDir: dir},
		WatchOptions{PollInterval: 20 * time.Millisecond}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opened.Close() })
	w := opened.(*watchedStore)
	first := saveDelta(t, w, 1)

	// Another bucket, new keys: refused.
	linkSecret(t, dir, "..v2", keys("key-b", "secret-of-key-b", "elsewhere", srv.Endpoint))
	pollUntil(t, 10*time.Second, "the refusal of the new bucket", func() bool {
		return logs.count("another store location", `bucket \"home\" → \"elsewhere\"`) > 0
	})
	if n := currentGeneration(w); n != 0 {
		t.Fatalf("generation %d is current after a rotation to another bucket, want the first (0) kept", n)
	}
	second := saveDelta(t, w, 2)

	// Same bucket, new keys, another endpoint: refused as well. 127.0.0.1 and localhost reach the same
	// server here, but the store cannot know that of an endpoint in general.
	other := strings.Replace(srv.Endpoint, "127.0.0.1", "localhost", 1)
	if other == srv.Endpoint {
		t.Fatalf("endpoint %s has no 127.0.0.1 to replace", srv.Endpoint)
	}
	linkSecret(t, dir, "..v3", keys("key-b", "secret-of-key-b", "home", other))
	pollUntil(t, 10*time.Second, "the refusal of the new endpoint", func() bool {
		return logs.count("another store location", "endpoint", other) > 0
	})
	if n := currentGeneration(w); n != 0 {
		t.Fatalf("generation %d is current after a rotation to another endpoint, want the first (0) kept", n)
	}
	third := saveDelta(t, w, 3)
	if got := namesIn(t, srv, "elsewhere"); len(got) != 0 {
		t.Errorf("bucket elsewhere holds %v, want nothing", got)
	}
	want := []string{first.SnapName, second.SnapName, third.SnapName}
	if got := namesIn(t, srv, "home"); !slices.Equal(got, want) {
		t.Errorf("bucket home holds %v, want %v", got, want)
	}

	// Keys only: accepted; key pair A revoked, deltas land in the same bucket with B.
	linkSecret(t, dir, "..v4", keys("key-b", "secret-of-key-b", "home", srv.Endpoint))
	pollUntil(t, 10*time.Second, "the reopen with key pair B", func() bool { return currentGeneration(w) == 1 })
	srv.DeleteUser(t, "key-a")
	fourth := saveDelta(t, w, 4)
	want = append(want, fourth.SnapName)
	if got := namesIn(t, srv, "home"); !slices.Equal(got, want) {
		t.Errorf("bucket home holds %v after the rotation of keys, want %v", got, want)
	}
	if all := logs.all(); strings.Contains(all, "secret-of-key") {
		t.Errorf("a secret access key reached the logs:\n%s", all)
	}
}

// TestStoreLocationChanges covers the fields a location compares and how a change is named.
func TestStoreLocationChanges(t *testing.T) {
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", map[string]string{"accessKeyID": "a", "secretAccessKey": "s", "region": "eu-1", "bucketName": "b1"})
	cfg := Config{Provider: "aws", Prefix: "p", SecretDir: dir}
	before, err := resolveLocation(cfg)
	if err != nil {
		t.Fatal(err)
	}
	linkSecret(t, dir, "..v2", map[string]string{"accessKeyID": "a2", "secretAccessKey": "s2", "region": "eu-2", "bucketName": "b1"})
	after, err := resolveLocation(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`region "eu-1" → "eu-2"`}
	if got := before.changesTo(after); !slices.Equal(got, want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	if got := before.changesTo(before); len(got) != 0 {
		t.Errorf("changes to itself = %v, want none", got)
	}
	if s := before.String() + after.String(); strings.Contains(s, "s2") || strings.Contains(s, `"a"`) {
		t.Errorf("location %s holds a credential", s)
	}
}
