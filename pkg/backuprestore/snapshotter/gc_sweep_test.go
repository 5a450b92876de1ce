package snapshotter_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/swiftserver"
)

// Garbage collection on Swift, through the store the sidecar opens (OpenWatched), also deletes the
// segments an interrupted upload left behind once nothing has written to them for a day, at most every
// twelve hours, and keeps the segments of every snapshot.
func TestGarbageCollectionSweepsAbandonedUploads(t *testing.T) {
	const prefix = "shoot--a/etcd-main"
	srv := swiftserver.Start(t)
	srv.CreateContainer(t, "backups")
	secret := t.TempDir()
	for k, v := range map[string]string{"authURL": srv.AuthURL, "username": srv.User, "password": srv.Key} {
		if err := os.WriteFile(filepath.Join(secret, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store, err := snapstore.OpenWatched(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderSwift, Container: "backups",
		Prefix: prefix, SecretDir: secret, Upload: snapstore.UploadOptions{ChunkSize: 1 << 20, MaxParallelChunks: 2}},
		snapstore.WatchOptions{}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	large := snapshot.NewFull(10, time.Now(), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), large, strings.NewReader(strings.Repeat("x", 3<<20))); err != nil {
		t.Fatal(err)
	}
	segmentsOfLarge := srv.ObjectNames(t, "backups", prefix+"/segments/")
	if len(segmentsOfLarge) != 4 { // three segments and the key object
		t.Fatalf("the large snapshot's upload holds %v", segmentsOfLarge)
	}
	abandon := func(id string) string {
		name := prefix + "/segments/20260101T000000.000000000Z-" + id + ".keyed/00000000"
		srv.PutObject(t, "backups", name, []byte("a segment of an upload that died"))
		return name
	}

	// The clock runs a day and an hour ahead: what was written now is old enough.
	now := time.Now().Add(25 * time.Hour)
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Store: store, Log: testr.New(t), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	segments := func() []string { return srv.ObjectNames(t, "backups", prefix+"/segments/") }
	first := abandon("FIRSTSWEEP")
	if err := s.CollectGarbage(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := segments(); slices.Contains(got, first) || !slices.Equal(got, segmentsOfLarge) {
		t.Fatalf("after the first garbage collection the uploads hold %v, want only %v", got, segmentsOfLarge)
	}

	second := abandon("NEXTSWEEP0")
	now = now.Add(11 * time.Hour)
	if err := s.CollectGarbage(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := segments(); !slices.Contains(got, second) {
		t.Fatalf("a garbage collection 11 hours after the last sweep swept again: the uploads hold %v", got)
	}
	now = now.Add(time.Hour)
	if err := s.CollectGarbage(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := segments(); slices.Contains(got, second) || !slices.Equal(got, segmentsOfLarge) {
		t.Fatalf("12 hours after the last sweep the uploads hold %v, want only %v", got, segmentsOfLarge)
	}
	if got := storedNames(t, store); !slices.Equal(got, []string{"Full-10"}) {
		t.Fatalf("the store holds %v", got)
	}
}
