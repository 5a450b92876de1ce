package sidecar

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// startS3 runs versitygw with a bucket and returns the store configuration for prefix, credentials in a
// secret directory as Kubernetes mounts it.
func startS3(b *testing.B) func(prefix string) snapstore.Config {
	b.Helper()
	srv := s3server.Start(b)
	srv.CreateBucket(b, "bench")
	secret := b.TempDir()
	for k, v := range map[string]string{
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region,
		"endpoint": srv.Endpoint, "s3ForcePathStyle": "true",
	} {
		if err := os.WriteFile(filepath.Join(secret, k), []byte(v), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return func(prefix string) snapstore.Config {
		return snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: "bench", Prefix: prefix, SecretDir: secret}
	}
}

// startEtcd runs etcd in its own process; it is stopped when the benchmark ends.
func startEtcd(b *testing.B, noFsync bool) (*child, string) {
	b.Helper()
	var ready etcdReady
	c := startChild(b, "etcd", etcdParams{DataDir: filepath.Join(b.TempDir(), "etcd"), NoFsync: noFsync}, &ready)
	return c, ready.Endpoint
}

// objectValue is a value shaped like a Kubernetes object in etcd: structured text around payload that
// compresses about as well as real objects (hex-encoded random bytes: 50%, the rest repetitive).
func objectValue(i, size int) string {
	payload := make([]byte, size*3/8)
	_, _ = rand.Read(payload)
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"object-%d","namespace":"shoot--bench","labels":{"app":"bench"}},"data":{"payload":"%s"`,
		i, hex.EncodeToString(payload))
	for sb.Len() < size-2 {
		sb.WriteString(`,"annotation":"managed-by-gardener-etcd-benchmark"`)
	}
	sb.WriteString("}}")
	return sb.String()
}
