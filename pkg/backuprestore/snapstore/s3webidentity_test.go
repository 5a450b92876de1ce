package snapstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/minioserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/oidcissuer"
)

// tokenFor signs a token of the issuer (or of another key) for audience, valid until expiry from now.
func tokenFor(t *testing.T, iss *oidcissuer.Issuer, key *rsa.PrivateKey, audience string, expiry time.Duration) string {
	t.Helper()
	tok, err := iss.Token(key, "system:serviceaccount:shoot--a:etcd-backup", audience, expiry)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const (
	minioRegion   = "us-east-1"
	minioClientID = "etcd-backup"
)

// A workload-identity S3 secret (roleARN and a token file, no static keys) is exchanged for credentials at
// a real STS (MinIO's AssumeRoleWithWebIdentity against a local OpenID issuer): a full snapshot is stored
// and read back; a token rotated in the file is used at the next exchange; an expired token or one of
// another issuer's key is refused with STS's answer.
func TestS3WorkloadIdentityAgainstMinIOSTS(t *testing.T) {
	iss := oidcissuer.Start(t)
	minio := minioserver.Start(t, minioserver.Config{Region: minioRegion, OpenID: &minioserver.OpenID{
		ConfigURL: iss.ConfigURL(), ClientID: minioClientID, RolePolicy: "readwrite"}})
	endpoint, roleARN := minio.Endpoint, minio.RoleARN
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	root := s3.New(s3.Options{BaseEndpoint: aws.String(endpoint), Region: minioRegion, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: minioserver.RootUser, SecretAccessKey: minioserver.RootPassword}, nil
		})})
	if _, err := root.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("backups")}); err != nil {
		t.Fatal(err)
	}

	dir := writeSecretDir(t, map[string]string{"region": minioRegion, "roleARN": roleARN, "endpoint": endpoint,
		"s3ForcePathStyle": "true", "bucketName": "backups", "token": tokenFor(t, iss, iss.Key, minioClientID, time.Hour)})
	store, err := New(t.Context(), Config{Provider: "aws", Prefix: "shoot--a/etcd-main", SecretDir: dir}, testr.New(t))
	if err != nil {
		t.Fatalf("store with workload identity: %v", err)
	}
	defer func() { _ = store.Close() }()
	data := bytes.Repeat([]byte("full snapshot "), 1<<16)
	full := snapshot.NewFull(42, time.Now(), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), full, bytes.NewReader(data)); err != nil {
		t.Fatalf("saving a full snapshot with assumed-role credentials: %v", err)
	}
	list, err := store.List(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	rc, err := store.Fetch(t.Context(), list[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fetched %d bytes (%v), want the %d saved", len(got), err, len(data))
	}

	// The credentials cache exchanges again when the role's credentials expire (here: invalidated), reading
	// the token file as it is then.
	cfg, err := s3ConfigFrom(Config{}, secretDir{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cfg.client()
	if err != nil {
		t.Fatal(err)
	}
	cache, ok := client.Options().Credentials.(*aws.CredentialsCache)
	if !ok {
		t.Fatalf("credentials are %T, want a refreshing cache", client.Options().Credentials)
	}
	list2 := func() error {
		cache.Invalidate()
		_, err := client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String("backups")})
		return err
	}
	writeToken := func(tok string) {
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := list2(); err != nil {
		t.Fatalf("first token: %v", err)
	}
	writeToken(tokenFor(t, iss, iss.Key, minioClientID, -time.Minute))
	err = list2()
	t.Logf("expired token: %v", err)
	if err == nil || !strings.Contains(err.Error(), "AssumeRoleWithWebIdentity") || !strings.Contains(strings.ToLower(err.Error()), "expired") {
		t.Fatalf("expired token: err = %v, want STS's refusal naming the expiry", err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	writeToken(tokenFor(t, iss, other, minioClientID, time.Hour))
	if err := list2(); err == nil || !strings.Contains(err.Error(), "AssumeRoleWithWebIdentity") {
		t.Fatalf("token signed by another key: err = %v, want STS's refusal", err)
	}
	writeToken(tokenFor(t, iss, iss.Key, minioClientID, time.Hour))
	if err := list2(); err != nil {
		t.Fatalf("rotated token: %v", err)
	}
}

// In a pod nothing sets AWS_ENDPOINT_URL_STS (druid renders no such variable): a workload identity of an
// S3-compatible server (the secret's endpoint, here MinIO) must be exchanged at that server's own STS, or
// the sidecar would ask AWS's STS for a role AWS does not know.
func TestS3WorkloadIdentityExchangesAtTheSecretsEndpointWithoutSTSVariable(t *testing.T) {
	iss := oidcissuer.Start(t)
	minio := minioserver.Start(t, minioserver.Config{Region: minioRegion, OpenID: &minioserver.OpenID{
		ConfigURL: iss.ConfigURL(), ClientID: minioClientID, RolePolicy: "readwrite"}})
	for _, v := range []string{"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(v, "") // restored after the test
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
	root := s3.New(s3.Options{BaseEndpoint: aws.String(minio.Endpoint), Region: minioRegion, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: minioserver.RootUser, SecretAccessKey: minioserver.RootPassword}, nil
		})})
	if _, err := root.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("backups")}); err != nil {
		t.Fatal(err)
	}
	dir := writeSecretDir(t, map[string]string{"region": minioRegion, "roleARN": minio.RoleARN, "endpoint": minio.Endpoint,
		"s3ForcePathStyle": "true", "bucketName": "backups", "token": tokenFor(t, iss, iss.Key, minioClientID, time.Hour)})
	store, err := New(t.Context(), Config{Provider: "aws", Prefix: "shoot--a/etcd-main", SecretDir: dir}, testr.New(t))
	if err != nil {
		t.Fatalf("store with workload identity: %v", err)
	}
	defer func() { _ = store.Close() }()
	full := snapshot.NewFull(7, time.Now(), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), full, strings.NewReader("full snapshot")); err != nil {
		t.Fatalf("saving a full snapshot with credentials of the secret's endpoint's STS: %v", err)
	}
}
