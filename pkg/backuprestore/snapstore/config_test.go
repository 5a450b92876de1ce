package snapstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestCanonicalProvider(t *testing.T) {
	valid := map[druidv1alpha1.StorageProvider]Provider{
		"Local": ProviderLocal, "S3": ProviderS3, "aws": ProviderS3, "ABS": ProviderABS, "azure": ProviderABS, "GCS": ProviderGCS, "gcp": ProviderGCS,
		"OSS": ProviderOSS, "alicloud": ProviderOSS, "ECS": ProviderECS, "dell": ProviderECS, "OCS": ProviderOCS, "openshift": ProviderOCS,
		"Swift": ProviderSwift, "openstack": ProviderSwift,
		"stackit": ProviderS3, "local": ProviderLocal, "s3": ProviderS3, "swift": ProviderSwift, "oss": ProviderOSS,
	}
	for in, want := range valid {
		if got, err := CanonicalProvider(in); err != nil || got != want {
			t.Errorf("CanonicalProvider(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []druidv1alpha1.StorageProvider{"", "LOCAL", "Aws", "ftp"} {
		if got, err := CanonicalProvider(in); err == nil {
			t.Errorf("CanonicalProvider(%q) = %q, want an error", in, got)
		}
	}
}

func s3Secret() map[string]string {
	return map[string]string{
		"accessKeyID": "AKID\n", "secretAccessKey": "SECRET", "region": " eu-west-1 ",
		"endpoint": "s3.example.com:9000", "s3ForcePathStyle": "true", "insecureSkipVerify": "false",
	}
}

func TestS3ConfigFromSecret(t *testing.T) {
	dir := writeSecretDir(t, s3Secret())
	c, err := s3ConfigFrom(Config{Container: "bkt", SecretDir: dir}, secretDir{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := s3Config{bucket: "bkt", region: "eu-west-1", endpoint: "https://s3.example.com:9000", accessKeyID: "AKID", secretAccessKey: "SECRET", forcePathStyle: true}
	if c.bucket != want.bucket || c.region != want.region || c.endpoint != want.endpoint || c.accessKeyID != want.accessKeyID ||
		c.secretAccessKey != want.secretAccessKey || c.forcePathStyle != want.forcePathStyle || c.insecureSkipVerify {
		t.Fatalf("got %+v, want %+v", c, want)
	}

	c, err = s3ConfigFrom(Config{Container: "bkt", EndpointOverride: "http://127.0.0.1:1234"}, secretDir{dir: dir})
	if err != nil || c.endpoint != "http://127.0.0.1:1234" {
		t.Fatalf("endpoint override: %q, %v", c.endpoint, err)
	}

	withBucket := s3Secret()
	withBucket["bucketName"] = "from-gardener"
	c, err = s3ConfigFrom(Config{}, secretDir{dir: writeSecretDir(t, withBucket)})
	if err != nil || c.bucket != "from-gardener" {
		t.Fatalf("bucketName fallback: %q, %v", c.bucket, err)
	}

	withCA := s3Secret()
	withCA["trustedCaCert"] = string(selfSignedCertPEM(t))
	if c, err := s3ConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, withCA)}); err != nil || len(c.trustedCACert) == 0 {
		t.Fatalf("trusted CA: %v", err)
	} else if _, err := c.client(); err != nil {
		t.Fatalf("client with trusted CA: %v", err)
	}
}

func TestS3ConfigErrorsNameKeyAndDirectory(t *testing.T) {
	for _, key := range []string{"accessKeyID", "secretAccessKey", "region"} {
		secret := s3Secret()
		delete(secret, key)
		dir := writeSecretDir(t, secret)
		_, err := New(t.Context(), Config{Provider: "S3", Container: "b", SecretDir: dir}, testr.New(t))
		if err == nil || !strings.Contains(err.Error(), `"`+key+`"`) || !strings.Contains(err.Error(), dir) {
			t.Errorf("secret without %s: err = %v, want one naming the key and %s", key, err, dir)
		}
	}
	bad := map[string]string{"s3ForcePathStyle": "yes please", "trustedCaCert": "not a certificate"}
	for key, value := range bad {
		secret := s3Secret()
		secret[key] = value
		_, err := s3ConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, secret)})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: err = %v, want one naming the key", key, value, err)
		}
	}
	if _, err := s3ConfigFrom(Config{}, secretDir{dir: writeSecretDir(t, s3Secret())}); err == nil || !strings.Contains(err.Error(), "bucketName") {
		t.Errorf("no container: err = %v, want one mentioning bucketName", err)
	}
	// Without a secret the pod's ambient credentials are used; their region must come from the environment.
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	if _, err := New(t.Context(), Config{Provider: "aws", Container: "b"}, testr.New(t)); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("no secret dir, no region: err = %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := New(t.Context(), Config{Provider: "aws", Container: "b", SecretDir: missing}, testr.New(t)); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing secret dir: err = %v", err)
	}
}

func absSecret() map[string]string {
	return map[string]string{"storageAccount": "acct", "storageKey": base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")) + "\n"}
}

func TestABSConfig(t *testing.T) {
	c, err := absConfigFrom(Config{Container: "bkt"}, secretDir{dir: writeSecretDir(t, absSecret())})
	if err != nil || c.containerURL != "https://acct.blob.core.windows.net/bkt" {
		t.Fatalf("default domain: %q, %v", c.containerURL, err)
	}
	sovereign := absSecret()
	sovereign["domain"] = "blob.core.chinacloudapi.cn"
	if c, err := absConfigFrom(Config{Container: "bkt"}, secretDir{dir: writeSecretDir(t, sovereign)}); err != nil || c.containerURL != "https://acct.blob.core.chinacloudapi.cn/bkt" {
		t.Fatalf("domain key: %q, %v", c.containerURL, err)
	}
	if c, err := absConfigFrom(Config{Container: "bkt", EndpointOverride: "http://127.0.0.1:10000/"}, secretDir{dir: writeSecretDir(t, absSecret())}); err != nil || c.containerURL != "http://127.0.0.1:10000/acct/bkt" {
		t.Fatalf("emulator endpoint: %q, %v", c.containerURL, err)
	}
	for _, key := range []string{"storageAccount", "storageKey"} {
		secret := absSecret()
		delete(secret, key)
		dir := writeSecretDir(t, secret)
		if _, err := absConfigFrom(Config{Container: "b"}, secretDir{dir: dir}); err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), dir) {
			t.Errorf("secret without %s: err = %v", key, err)
		}
	}
	notBase64 := absSecret()
	notBase64["storageKey"] = "not base64!"
	if _, err := absConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, notBase64)}); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("bad storageKey: err = %v", err)
	}
	// The whole store is constructible (the alias included) without reaching Azure.
	store, err := New(t.Context(), Config{Provider: "azure", Container: "bkt", Prefix: "p", SecretDir: writeSecretDir(t, absSecret())}, testr.New(t))
	if err != nil {
		t.Fatalf("New ABS store: %v", err)
	}
	_ = store.Close()
}

func TestGCSConfig(t *testing.T) {
	dir := writeSecretDir(t, map[string]string{"serviceaccount.json": serviceAccountJSON(t)})
	c, err := gcsConfigFrom(Config{Container: "bkt"}, secretDir{dir: dir})
	if err != nil || c.bucket != "bkt" || len(c.credentialsFile) == 0 {
		t.Fatalf("gcs config: %+v, %v", c, err)
	}
	store, err := New(t.Context(), Config{Provider: "gcp", Container: "bkt", Prefix: "p", SecretDir: dir}, testr.New(t))
	if err != nil {
		t.Fatalf("New GCS store: %v", err)
	}
	_ = store.Close()

	empty := writeSecretDir(t, map[string]string{})
	if _, err := gcsConfigFrom(Config{Container: "bkt"}, secretDir{dir: empty}); err == nil || !strings.Contains(err.Error(), "serviceaccount.json") || !strings.Contains(err.Error(), empty) {
		t.Errorf("missing key: err = %v", err)
	}
	broken := writeSecretDir(t, map[string]string{"serviceaccount.json": `{"type":"authorized_user"}`})
	if _, err := gcsConfigFrom(Config{Container: "bkt"}, secretDir{dir: broken}); err == nil || !strings.Contains(err.Error(), "serviceaccount.json") {
		t.Errorf("wrong credential type: err = %v", err)
	}
	// An emulator needs no credentials.
	emu, err := New(t.Context(), Config{Provider: "GCS", Container: "bkt", EndpointOverride: "http://127.0.0.1:4443/storage/v1/"}, testr.New(t))
	if err != nil {
		t.Fatalf("GCS emulator store: %v", err)
	}
	_ = emu.Close()
}

func TestLocalConfig(t *testing.T) {
	root := t.TempDir()
	c, err := localConfigFrom(Config{LocalRoot: root}, secretDir{dir: writeSecretDir(t, map[string]string{"bucketName": "from-secret", "hostPath": "/etc/gardener/local-backupbuckets"})})
	if err != nil || c.dir != filepath.Join(root, "from-secret") {
		t.Fatalf("bucketName fallback: %q, %v", c.dir, err)
	}
	for _, bad := range []string{"../escape", "a/b", "/abs", "..", "."} {
		if _, err := localConfigFrom(Config{LocalRoot: root, Container: bad}, secretDir{}); err == nil {
			t.Errorf("container %q: want an error", bad)
		}
	}
}

func selfSignedCertPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func serviceAccountJSON(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	data, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test", "private_key_id": "1", "private_key": string(keyPEM),
		"client_email": "backup@test.iam.gserviceaccount.com", "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
