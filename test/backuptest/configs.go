package backuptest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/azurite"
	"github.com/gardener-etcd/gardener-etcd/test/gcsserver"
	"github.com/gardener-etcd/gardener-etcd/test/s3server"
)

// Location is a store as a command line sees it: the configuration etcdbrctl's store flags and
// credentials variables produce, for tests that run the CLI against a store they also open directly.
type Location struct {
	// Config opens the store with snapstore.New.
	Config snapstore.Config
	// Args are the store flags with flagPrefix applied (e.g. "source-").
	Args func(flagPrefix string) []string
	// Home is the HOME a command needs for a Local store (LocalRoot); empty for the others.
	Home string
}

// LocalLocation is a Local store in a temporary directory, container "bkp", prefix Prefix.
func LocalLocation(t *testing.T) Location {
	t.Helper()
	root := t.TempDir()
	cfg := snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp", Prefix: Prefix, LocalRoot: root}
	return Location{Config: cfg, Home: root, Args: func(p string) []string {
		return []string{"--" + p + "storage-provider=Local", "--" + p + "store-container=bkp", "--" + p + "store-prefix=" + Prefix}
	}}
}

// S3Location is a fresh bucket on a versitygw server started for the test, with its backup secret
// written as a directory the way Kubernetes mounts it. Args pass the secret with
// --<prefix>store-secret-dir; tests of the credentials variables set those instead.
func S3Location(t *testing.T) Location {
	t.Helper()
	srv := s3server.Start(t)
	bucket := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateBucket(t, bucket)
	secret := secretDir(t, map[string]string{
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true",
	})
	cfg := snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: bucket, Prefix: Prefix, SecretDir: secret}
	return Location{Config: cfg, Args: func(p string) []string {
		return []string{"--" + p + "storage-provider=aws", "--" + p + "store-container=" + bucket, "--" + p + "store-prefix=" + Prefix,
			"--" + p + "store-secret-dir=" + secret}
	}}
}

// ABSLocation is a fresh container on an Azurite server started for the test, reached through the
// endpoint override with the account's shared key in a backup secret directory. Without Node.js the test
// is skipped (see azurite.Start).
func ABSLocation(t *testing.T) Location {
	t.Helper()
	srv := azurite.Start(t)
	container := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateContainer(t, container)
	secret := secretDir(t, map[string]string{"storageAccount": srv.Account, "storageKey": srv.Key})
	cfg := snapstore.Config{Provider: druidv1alpha1.StorageProviderABS, Container: container, Prefix: Prefix,
		EndpointOverride: srv.Endpoint, SecretDir: secret}
	return Location{Config: cfg, Args: func(p string) []string {
		return []string{"--" + p + "storage-provider=azure", "--" + p + "store-container=" + container, "--" + p + "store-prefix=" + Prefix,
			"--" + p + "store-endpoint-override=" + srv.Endpoint, "--" + p + "store-secret-dir=" + secret}
	}}
}

// GCSLocation is a fresh bucket on a fake-gcs-server started for the test, reached through the endpoint
// override without credentials (an emulator needs no service account).
func GCSLocation(t *testing.T) Location {
	t.Helper()
	srv := gcsserver.Start(t)
	bucket := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateBucket(t, bucket)
	cfg := snapstore.Config{Provider: druidv1alpha1.StorageProviderGCS, Container: bucket, Prefix: Prefix, EndpointOverride: srv.Endpoint}
	return Location{Config: cfg, Args: func(p string) []string {
		return []string{"--" + p + "storage-provider=gcp", "--" + p + "store-container=" + bucket, "--" + p + "store-prefix=" + Prefix,
			"--" + p + "store-endpoint-override=" + srv.Endpoint}
	}}
}

// secretDir writes a backup secret the way Kubernetes mounts it: one file per key.
func secretDir(t *testing.T, keys map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Open opens the location's store for the test.
func (l Location) Open(t *testing.T) snapstore.SnapStore {
	t.Helper()
	s, err := snapstore.New(t.Context(), l.Config, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
