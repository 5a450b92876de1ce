package snapstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // MinIO derives its role ID with SHA-1; not a security use here
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// oidcIssuer is a minimal OpenID provider: a discovery document and a JWKS, and tokens signed with its key.
type oidcIssuer struct {
	url string
	key *rsa.PrivateKey
}

func startOIDCIssuer(t *testing.T) *oidcIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &oidcIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/keys",
			"authorization_endpoint": iss.url + "/auth", "token_endpoint": iss.url + "/token",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "test", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	return iss
}

// token signs a token for audience valid from now until expiry (negative: already expired).
func (iss *oidcIssuer) token(t *testing.T, key *rsa.PrivateKey, audience string, expiry time.Duration) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss.url, Subject: "system:serviceaccount:shoot--a:etcd-backup",
		Audience: jwt.Audience{audience}, IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)),
		NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(expiry))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const (
	minioRootUser     = "minio-root"
	minioRootPassword = "minio-root-secret"
	minioRegion       = "us-east-1"
	minioClientID     = "etcd-backup"
)

// startMinIOWithOIDC runs MinIO (its binary from $MINIO_BIN or bin/minio, built from MinIO's Go module)
// trusting iss, with one role (a client ID) whose policy is MinIO's built-in readwrite; it returns the
// endpoint and the role's ARN.
func startMinIOWithOIDC(t *testing.T, iss *oidcIssuer) (endpoint, roleARN string) {
	t.Helper()
	bin := os.Getenv("MINIO_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin/minio")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("MinIO binary not available (%v): build it with `go install github.com/minio/minio@<version>` and set MINIO_BIN", err)
	}
	port := freeport.Port(t)
	console := freeport.Port(t)
	endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", fmt.Sprintf("127.0.0.1:%d", port), "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+minioRootUser, "MINIO_ROOT_PASSWORD="+minioRootPassword,
		"MINIO_SITE_REGION="+minioRegion, "MINIO_BROWSER=off",
		"MINIO_IDENTITY_OPENID_CONFIG_URL="+iss.url+"/.well-known/openid-configuration",
		"MINIO_IDENTITY_OPENID_CLIENT_ID="+minioClientID, "MINIO_IDENTITY_OPENID_ROLE_POLICY=readwrite")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("MinIO log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(endpoint + "/minio/health/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinIO not ready: %v\n%s", err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	sum := sha1.Sum([]byte(minioClientID)) //nolint:gosec // see import
	return endpoint, fmt.Sprintf("arn:minio:iam:%s::role/%s", minioRegion, base64.RawURLEncoding.EncodeToString(sum[:]))
}

// A workload-identity S3 secret (roleARN and a token file, no static keys) is exchanged for credentials at
// a real STS (MinIO's AssumeRoleWithWebIdentity against a local OpenID issuer): a full snapshot is stored
// and read back; a token rotated in the file is used at the next exchange; an expired token or one of
// another issuer's key is refused with STS's answer.
func TestS3WorkloadIdentityAgainstMinIOSTS(t *testing.T) {
	iss := startOIDCIssuer(t)
	endpoint, roleARN := startMinIOWithOIDC(t, iss)
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	root := s3.New(s3.Options{BaseEndpoint: aws.String(endpoint), Region: minioRegion, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: minioRootUser, SecretAccessKey: minioRootPassword}, nil
		})})
	if _, err := root.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("backups")}); err != nil {
		t.Fatal(err)
	}

	dir := writeSecretDir(t, map[string]string{"region": minioRegion, "roleARN": roleARN, "endpoint": endpoint,
		"s3ForcePathStyle": "true", "bucketName": "backups", "token": iss.token(t, iss.key, minioClientID, time.Hour)})
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
	writeToken(iss.token(t, iss.key, minioClientID, -time.Minute))
	err = list2()
	t.Logf("expired token: %v", err)
	if err == nil || !strings.Contains(err.Error(), "AssumeRoleWithWebIdentity") || !strings.Contains(strings.ToLower(err.Error()), "expired") {
		t.Fatalf("expired token: err = %v, want STS's refusal naming the expiry", err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	writeToken(iss.token(t, other, minioClientID, time.Hour))
	if err := list2(); err == nil || !strings.Contains(err.Error(), "AssumeRoleWithWebIdentity") {
		t.Fatalf("token signed by another key: err = %v, want STS's refusal", err)
	}
	writeToken(iss.token(t, iss.key, minioClientID, time.Hour))
	if err := list2(); err != nil {
		t.Fatalf("rotated token: %v", err)
	}
}
