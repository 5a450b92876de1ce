package snapshotter_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// Garbage collection on S3, through the store the sidecar opens (OpenWatched), also deletes the staged
// uploads no save deleted once they are a day old and a later full snapshot is stored, at most every
// twelve hours, and keeps the newest full snapshot.
func TestGarbageCollectionSweepsAbandonedUploads(t *testing.T) {
	const bucket, prefix = "backups", "shoot--a/etcd-main"
	srv := s3server.Start(t)
	srv.CreateBucket(t, bucket)
	secret := backuptest.SecretDir(t, map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true"})
	store, err := snapstore.OpenWatched(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket,
		Prefix: prefix, SecretDir: secret}, snapstore.WatchOptions{}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	client := srv.Client()
	// A staged upload whose save died, and the next full snapshot, which a sweep waits for.
	abandon := func(n int) {
		staged := prefix + "/staging/" + strconv.FormatInt(time.Now().UnixNano(), 10) // named as a save names it
		if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(staged),
			Body: strings.NewReader("a staged upload whose save died")}); err != nil {
			t.Fatal(err)
		}
		next := snapshot.NewFull(int64(10*n), time.Now().Add(time.Second), snapshot.CompressionNone, false)
		if err := store.Save(t.Context(), next, strings.NewReader("a snapshot")); err != nil {
			t.Fatal(err)
		}
	}
	leftovers := func() int {
		objects, err := client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/staging/")})
		if err != nil {
			t.Fatal(err)
		}
		return len(objects.Contents)
	}

	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	var now time.Time
	term := func() *snapshotter.Snapshotter {
		s, err := snapshotter.New(snapshotter.Options{Config: cfg, Store: store, Log: testr.New(t), Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := term()
	collect := func(after time.Duration, want int) {
		t.Helper()
		now = now.Add(after)
		if err := s.CollectGarbage(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := leftovers(); got != want {
			t.Fatalf("garbage collection %s after the previous one left %d staged uploads, want %d", after, got, want)
		}
	}
	abandon(1)
	// 23 hours on, the staged upload is not old enough.
	now = time.Now().Add(23 * time.Hour)
	collect(0, 1)
	// A day and an hour on, in a new term, it is.
	now, s = time.Now().Add(25*time.Hour), term()
	collect(0, 0)
	abandon(2)
	collect(11*time.Hour, 1) // within twelve hours of the last sweep
	collect(time.Hour, 0)
	if got := storedNames(t, store); !slices.Contains(got, "Full-20") {
		t.Fatalf("the store holds %v, without the newest full snapshot", got)
	}
}

// A sweep that fails is logged; garbage collection still succeeds.
func TestGarbageCollectionSucceedsWhenTheSweepFails(t *testing.T) {
	store, err := snapstore.New(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp",
		Prefix: "shoot--a/etcd-main", LocalRoot: t.TempDir()}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	sweeper := &failingSweeper{countingDeletes: countingDeletes{SnapStore: store}}
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Store: sweeper, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CollectGarbage(t.Context()); err != nil || sweeper.sweeps != 1 {
		t.Fatalf("garbage collection with a failing sweep: %v after %d sweeps, want success after one", err, sweeper.sweeps)
	}
}

// failingSweeper is a store whose sweeps fail.
type failingSweeper struct {
	countingDeletes
	sweeps int
}

func (f *failingSweeper) SweepAbandonedUploads(context.Context, time.Time) (snapstore.SweptUploads, error) {
	f.sweeps++
	return snapstore.SweptUploads{}, errors.New("the store did not answer the listing")
}
