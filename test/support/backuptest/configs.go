package backuptest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/azurite"
	"github.com/gardener-etcd/gardener-etcd/test/support/gcsserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
	"github.com/gardener-etcd/gardener-etcd/test/support/swiftserver"
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
	return s3APILocation(t, druidv1alpha1.StorageProviderAWS, s3server.DefaultRegion, false, func(srv *s3server.Server) map[string]string {
		return map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
			"endpoint": srv.Endpoint, "s3ForcePathStyle": "true"}
	})
}

// OSSLocation is S3Location with an OSS secret (storageEndpoint, accessKeyID, accessKeySecret). The secret
// names a real regional endpoint, whose region the server signs for, and --store-endpoint-override sends
// the requests to versitygw (see snapstore's TestOSSConformance for the addressing).
func OSSLocation(t *testing.T) Location {
	t.Helper()
	return s3APILocation(t, druidv1alpha1.StorageProviderAlicloud, "cn-hangzhou", true, func(srv *s3server.Server) map[string]string {
		return map[string]string{"storageEndpoint": "oss-cn-hangzhou.aliyuncs.com", "accessKeyID": srv.AccessKey, "accessKeySecret": srv.SecretKey}
	})
}

// ECSLocation is S3Location with an ECS secret (endpoint, accessKeyID, secretAccessKey); ECS signs for
// its fixed region US-Standard.
func ECSLocation(t *testing.T) Location {
	t.Helper()
	return s3APILocation(t, druidv1alpha1.StorageProviderDell, "US-Standard", false, func(srv *s3server.Server) map[string]string {
		return map[string]string{"endpoint": srv.Endpoint, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey}
	})
}

// OCSLocation is S3Location with an OCS secret (endpoint, accessKeyID, secretAccessKey, region).
func OCSLocation(t *testing.T) Location {
	t.Helper()
	return s3APILocation(t, druidv1alpha1.StorageProviderOpenShift, "noobaa", false, func(srv *s3server.Server) map[string]string {
		return map[string]string{"endpoint": srv.Endpoint, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region}
	})
}

// s3APILocation starts a versitygw server signing for region, creates a fresh bucket and writes the
// provider's secret (keys); overrideEndpoint passes the server's address as the endpoint override.
func s3APILocation(t *testing.T, provider druidv1alpha1.StorageProvider, region string, overrideEndpoint bool, keys func(*s3server.Server) map[string]string) Location {
	t.Helper()
	srv := s3server.StartWithOptions(t, s3server.Options{Region: region})
	bucket := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateBucket(t, bucket)
	secret := SecretDir(t, keys(srv))
	cfg := snapstore.Config{Provider: provider, Container: bucket, Prefix: Prefix, SecretDir: secret}
	if overrideEndpoint {
		cfg.EndpointOverride = srv.Endpoint
	}
	return Location{Config: cfg, Args: func(p string) []string {
		args := []string{"--" + p + "storage-provider=" + string(provider), "--" + p + "store-container=" + bucket, "--" + p + "store-prefix=" + Prefix,
			"--" + p + "store-secret-dir=" + secret}
		if overrideEndpoint {
			args = append(args, "--"+p+"store-endpoint-override="+srv.Endpoint)
		}
		return args
	}}
}

// SwiftLocation is a fresh container on an OpenStack Swift started for the test (TempAuth; see
// test/swiftserver, which skips the test when Swift is not installed), with its backup secret written as a
// directory. Args pass the secret with --<prefix>store-secret-dir.
func SwiftLocation(t *testing.T) Location {
	t.Helper()
	srv := swiftserver.Start(t)
	container := fmt.Sprintf("bkp-%d", buckets.Add(1))
	srv.CreateContainer(t, container)
	secret := SecretDir(t, map[string]string{"authURL": srv.AuthURL, "username": srv.User, "password": srv.Key})
	cfg := snapstore.Config{Provider: druidv1alpha1.StorageProviderSwift, Container: container, Prefix: Prefix, SecretDir: secret}
	return Location{Config: cfg, Args: func(p string) []string {
		return []string{"--" + p + "storage-provider=openstack", "--" + p + "store-container=" + container, "--" + p + "store-prefix=" + Prefix,
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
	secret := SecretDir(t, map[string]string{"storageAccount": srv.Account, "storageKey": srv.Key})
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

// SecretDir writes a backup secret the way Kubernetes mounts it, one file per key, and returns its
// directory.
func SecretDir(t *testing.T, keys map[string]string) string {
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
