package backuptest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/s3server"
)

// Prefix is the store prefix the tests use.
const Prefix = "etcd-main"

// Store is a store under test together with a way to reach its objects behind its back.
type Store struct {
	snapstore.SnapStore
	// Name is "Local" or "S3", for subtest names.
	Name string
	// ObjectPath is the file holding a snapshot's object, for corrupting it.
	ObjectPath func(snap *snapshot.Snapshot) string
}

// Kinds are the store constructors every round-trip test runs on.
var Kinds = []func(t *testing.T) *Store{Local, S3}

// Local opens a directory store in a temporary directory.
func Local(t *testing.T) *Store {
	t.Helper()
	root := t.TempDir()
	s, err := snapstore.New(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp", Prefix: Prefix, LocalRoot: root}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &Store{SnapStore: s, Name: "Local", ObjectPath: func(snap *snapshot.Snapshot) string {
		return filepath.Join(root, "bkp", filepath.FromSlash(snap.Key(Prefix)))
	}}
}

var buckets atomic.Int32

// S3 opens a store on a fresh bucket of a versitygw server started for the test.
func S3(t *testing.T) *Store {
	t.Helper()
	srv := s3server.Start(t)
	bucket := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateBucket(t, bucket)
	secret := t.TempDir()
	for k, v := range map[string]string{
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true",
	} {
		if err := os.WriteFile(filepath.Join(secret, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := snapstore.New(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket, Prefix: Prefix, SecretDir: secret}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &Store{SnapStore: s, Name: "S3", ObjectPath: func(snap *snapshot.Snapshot) string {
		return srv.ObjectPath(bucket, snap.Key(Prefix))
	}}
}

// FlipByte inverts one byte of a file in place.
func FlipByte(t *testing.T, path string, offset int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, offset); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, offset); err != nil {
		t.Fatal(err)
	}
}
