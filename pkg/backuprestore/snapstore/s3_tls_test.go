package snapstore

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// An S3-compatible endpoint with a private CA works with the secret's trustedCaCert, or with
// insecureSkipVerify, and is refused without either.
func TestS3CustomCA(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{TLS: true})
	srv.CreateBucket(t, "secure")
	base := map[string]string{
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region, "s3ForcePathStyle": "true",
	}
	snap := snapshot.NewFull(1, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	trySave := func(t *testing.T, extra map[string]string) error {
		keys := map[string]string{}
		for k, v := range base {
			keys[k] = v
		}
		for k, v := range extra {
			keys[k] = v
		}
		store, err := New(t.Context(), Config{Provider: "S3", Container: "secure", Prefix: "tls", EndpointOverride: srv.Endpoint, SecretDir: writeSecretDir(t, keys)}, testr.New(t))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		return store.Save(t.Context(), snap, strings.NewReader(string(fullSnapshotBytes(1024, 9))))
	}

	if err := trySave(t, map[string]string{"trustedCaCert": string(srv.CACertPEM)}); err != nil {
		t.Fatalf("with trustedCaCert: %v", err)
	}
	if err := trySave(t, map[string]string{"insecureSkipVerify": "true"}); err != nil {
		t.Fatalf("with insecureSkipVerify: %v", err)
	}
	err := trySave(t, nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without CA: err = %v, want a certificate verification error", err)
	}
}
