package snapshotter_test

import (
	"os"
	"path/filepath"
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
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// Garbage collection on S3, through the store the sidecar opens (OpenWatched), also removes what
// interrupted uploads left behind (a staged upload no save copied, a multipart upload never completed)
// once it is a day old, at most every twelve hours, and leaves the snapshots alone.
func TestGarbageCollectionSweepsAbandonedUploads(t *testing.T) {
	const bucket, prefix = "backups", "shoot--a/etcd-main"
	srv := s3server.Start(t)
	srv.CreateBucket(t, bucket)
	secret := t.TempDir()
	for k, v := range map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true"} {
		if err := os.WriteFile(filepath.Join(secret, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store, err := snapstore.OpenWatched(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket,
		Prefix: prefix, SecretDir: secret}, snapstore.WatchOptions{}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Save(t.Context(), snapshot.NewFull(10, time.Now(), snapshot.CompressionNone, false), strings.NewReader("a snapshot")); err != nil {
		t.Fatal(err)
	}
	client := srv.Client()
	abandon := func(n int) {
		staged := prefix + "/staging/" + strconv.Itoa(1700000000000000000+n) // named as a save names it
		if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(staged),
			Body: strings.NewReader("a staged upload whose save died")}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CreateMultipartUpload(t.Context(), &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket),
			Key: aws.String(prefix + "/v2/Full-00000000-00000020-1700000000")}); err != nil {
			t.Fatal(err)
		}
	}
	leftovers := func() (staged, multipart int) {
		objects, err := client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/staging/")})
		if err != nil {
			t.Fatal(err)
		}
		uploads, err := client.ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		return len(objects.Contents), len(uploads.Uploads)
	}

	// The clock runs a day and an hour ahead: what was written now is old enough.
	now := time.Now().Add(25 * time.Hour)
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Store: store, Log: testr.New(t), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	collect := func(after time.Duration, wantStaged, wantMultipart int) {
		t.Helper()
		now = now.Add(after)
		if err := s.CollectGarbage(t.Context()); err != nil {
			t.Fatal(err)
		}
		if staged, multipart := leftovers(); staged != wantStaged || multipart != wantMultipart {
			t.Fatalf("garbage collection %s after the previous one left %d staged and %d multipart uploads, want %d and %d",
				after, staged, multipart, wantStaged, wantMultipart)
		}
	}
	abandon(1)
	collect(0, 0, 0)
	abandon(2)
	collect(11*time.Hour, 1, 1) // within twelve hours of the last sweep
	collect(time.Hour, 0, 0)
	if got := storedNames(t, store); !slices.Equal(got, []string{"Full-10"}) {
		t.Fatalf("the store holds %v", got)
	}
}
