package snapstore

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// openForTest opens a store of the provider on bucket with the given secret, failing the test on error.
func openForTest(t *testing.T, cfg Config) SnapStore {
	t.Helper()
	store, err := New(t.Context(), cfg, testr.New(t))
	if err != nil {
		t.Fatalf("New %s store: %v", cfg.Provider, err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// ECS's secret holds no region: requests are signed for US-Standard, so the server must sign for it.
func TestECSConformance(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{Region: ecsRegion})
	runConformance(t, s3Harness(t, srv, func(t *testing.T, bucket, prefix string, upload UploadOptions) SnapStore {
		secret := writeSecretDir(t, map[string]string{"endpoint": srv.Endpoint, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey})
		return openForTest(t, Config{Provider: druidv1alpha1.StorageProviderDell, Container: bucket, Prefix: prefix, SecretDir: secret, Upload: upload})
	}))
}

// OCS's endpoint is given without scheme and disableSSL selects plain HTTP, as OCS secrets commonly do.
func TestOCSConformance(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{Region: "noobaa"})
	hostPort := strings.TrimPrefix(srv.Endpoint, "http://")
	runConformance(t, s3Harness(t, srv, func(t *testing.T, bucket, prefix string, upload UploadOptions) SnapStore {
		secret := writeSecretDir(t, map[string]string{
			"endpoint": hostPort, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region, "disableSSL": "true",
		})
		return openForTest(t, Config{Provider: druidv1alpha1.StorageProviderOpenShift, Container: bucket, Prefix: prefix, SecretDir: secret, Upload: upload})
	}))
}

// OSS runs against versitygw through the S3 API OSS offers. The secret names the real regional endpoint
// (the region is derived from it, so the server signs for cn-hangzhou); --store-endpoint-override sends
// the requests to versitygw. Addressing: OSS needs virtual-hosted style, which the client asks for
// (TestOSSAddressing), but the AWS SDK addresses an endpoint given as an IP address path-style, which is
// what versitygw on 127.0.0.1 accepts; no name of this machine resolves <bucket>.<host> to loopback.
func TestOSSConformance(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{Region: "cn-hangzhou"})
	runConformance(t, s3Harness(t, srv, func(t *testing.T, bucket, prefix string, upload UploadOptions) SnapStore {
		secret := writeSecretDir(t, map[string]string{
			"storageEndpoint": "oss-cn-hangzhou.aliyuncs.com", "accessKeyID": srv.AccessKey, "accessKeySecret": srv.SecretKey + "\n",
		})
		return openForTest(t, Config{Provider: druidv1alpha1.StorageProviderAlicloud, Container: bucket, Prefix: prefix, SecretDir: secret,
			EndpointOverride: srv.Endpoint, Upload: upload})
	}))
}

// Upstream druid hands ECS its keys as environment variables (Config.SecretValues), not as a
// directory; they work alone and win over files.
func TestECSCredentialsAsValues(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{Region: ecsRegion})
	srv.CreateBucket(t, "ecs")
	values := map[string]string{"endpoint": srv.Endpoint, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey}
	staleDir := writeSecretDir(t, map[string]string{"endpoint": "http://127.0.0.1:1", "accessKeyID": "stale", "secretAccessKey": "stale"})
	for name, dir := range map[string]string{"values only": "", "values over files": staleDir} {
		t.Run(name, func(t *testing.T) {
			store := openForTest(t, Config{Provider: "ECS", Container: "ecs", Prefix: name, SecretDir: dir, SecretValues: values})
			snap := snapshot.NewFull(7, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
			save(t, store, snap, fullSnapshotBytes(1024, 4))
			if got := keys(list(t, store)); len(got) != 1 {
				t.Fatalf("listed %v after one save", got)
			}
		})
	}
}

func TestS3CompatibleConfigFromSecret(t *testing.T) {
	full := map[string]string{"endpoint": "ecs.example.com:9021", "accessKeyID": "AK", "secretAccessKey": "SK\n", "region": "r1"}
	c, err := s3CompatibleConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, full)}, ProviderECS)
	if err != nil {
		t.Fatal(err)
	}
	if c.endpoint != "https://ecs.example.com:9021" || c.region != ecsRegion || !c.forcePathStyle || c.secretAccessKey != "SK" || c.provider != ProviderECS {
		t.Fatalf("ECS config %+v: want https endpoint, region %s (the secret's region is not ECS's), path style", c, ecsRegion)
	}
	c, err = s3CompatibleConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, full)}, ProviderOCS)
	if err != nil || c.region != "r1" || !c.forcePathStyle {
		t.Fatalf("OCS config %+v, %v: want the secret's region and path style", c, err)
	}
	plain := map[string]string{"disableSSL": "true", "insecureSkipVerify": "true"}
	for k, v := range full {
		plain[k] = v
	}
	c, err = s3CompatibleConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, plain)}, ProviderOCS)
	if err != nil || c.endpoint != "http://ecs.example.com:9021" || !c.insecureSkipVerify {
		t.Fatalf("disableSSL: %+v, %v", c, err)
	}
	for provider, required := range map[Provider][]string{ProviderECS: {"endpoint", "accessKeyID", "secretAccessKey"}, ProviderOCS: {"endpoint", "accessKeyID", "secretAccessKey", "region"}} {
		for _, key := range required {
			secret := map[string]string{}
			for k, v := range full {
				if k != key {
					secret[k] = v
				}
			}
			dir := writeSecretDir(t, secret)
			_, err := s3CompatibleConfigFrom(Config{Container: "b"}, secretDir{dir: dir}, provider)
			if err == nil || !strings.Contains(err.Error(), `"`+key+`"`) || !strings.Contains(err.Error(), dir) {
				t.Errorf("%s without %s: err = %v, want one naming the key and the secret", provider, key, err)
			}
		}
	}
	bad := map[string]string{"disableSSL": "yes please"}
	for k, v := range full {
		bad[k] = v
	}
	if _, err := s3CompatibleConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, bad)}, ProviderOCS); err == nil || !strings.Contains(err.Error(), "disableSSL") {
		t.Fatalf("non-boolean disableSSL: err = %v", err)
	}
}

func TestOSSConfigFromSecret(t *testing.T) {
	secret := func(endpoint string) secretDir {
		return secretDir{dir: writeSecretDir(t, map[string]string{"storageEndpoint": endpoint, "accessKeyID": "AK", "accessKeySecret": "SK"})}
	}
	for endpoint, region := range map[string]string{
		"oss-eu-central-1.aliyuncs.com":              "eu-central-1",
		"https://oss-cn-hangzhou.aliyuncs.com":       "cn-hangzhou",
		"oss-cn-hangzhou-internal.aliyuncs.com":      "cn-hangzhou",
		"https://s3.oss-ap-southeast-1.aliyuncs.com": "ap-southeast-1",
	} {
		c, err := ossConfigFrom(Config{Container: "b"}, secret(endpoint))
		if err != nil || c.region != region || c.forcePathStyle || c.maxSingleCopy != 1<<30 || !strings.HasPrefix(c.endpoint, "https://") ||
			c.accessKeyID != "AK" || c.secretAccessKey != "SK" {
			t.Errorf("storageEndpoint %s: %+v, %v; want region %s, virtual-hosted style, https, copies in parts above 1 GiB", endpoint, c, err, region)
		}
	}
	for _, endpoint := range []string{"oss-accelerate.aliyuncs.com", "storage.example.com", "127.0.0.1:9000"} {
		if _, err := ossConfigFrom(Config{Container: "b"}, secret(endpoint)); err == nil || !strings.Contains(err.Error(), "storageEndpoint") {
			t.Errorf("storageEndpoint %s: err = %v, want one naming storageEndpoint", endpoint, err)
		}
	}
	c, err := ossConfigFrom(Config{Container: "b", EndpointOverride: "http://127.0.0.1:9000"}, secret("oss-cn-beijing.aliyuncs.com"))
	if err != nil || c.endpoint != "http://127.0.0.1:9000" || c.region != "cn-beijing" {
		t.Fatalf("endpoint override: %+v, %v; want the override's address and storageEndpoint's region", c, err)
	}
	for _, key := range []string{"storageEndpoint", "accessKeyID", "accessKeySecret"} {
		keys := map[string]string{"storageEndpoint": "oss-cn-beijing.aliyuncs.com", "accessKeyID": "AK", "accessKeySecret": "SK"}
		delete(keys, key)
		if _, err := ossConfigFrom(Config{Container: "b"}, secretDir{dir: writeSecretDir(t, keys)}); err == nil || !strings.Contains(err.Error(), `"`+key+`"`) {
			t.Errorf("without %s: err = %v", key, err)
		}
	}
}

// The OSS client addresses buckets virtual-hosted style at the regional endpoint (OSS refuses path
// style); the AWS SDK's own endpoint resolution of the configured client says where requests go.
func TestOSSAddressing(t *testing.T) {
	resolve := func(t *testing.T, cfg s3Config) string {
		t.Helper()
		client, err := cfg.client()
		if err != nil {
			t.Fatal(err)
		}
		o := client.Options()
		ep, err := o.EndpointResolverV2.ResolveEndpoint(t.Context(), s3.EndpointParameters{
			Bucket: &cfg.bucket, Region: &o.Region, Endpoint: o.BaseEndpoint, ForcePathStyle: &o.UsePathStyle,
		})
		if err != nil {
			t.Fatal(err)
		}
		return ep.URI.String()
	}
	dir := writeSecretDir(t, map[string]string{"storageEndpoint": "oss-eu-central-1.aliyuncs.com", "accessKeyID": "AK", "accessKeySecret": "SK"})
	c, err := ossConfigFrom(Config{Container: "etcd-backups"}, secretDir{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resolve(t, c), "https://etcd-backups.oss-eu-central-1.aliyuncs.com"; got != want {
		t.Fatalf("OSS request URL %s, want %s", got, want)
	}
	// What TestOSSConformance relies on: an IP endpoint is addressed path-style.
	c, err = ossConfigFrom(Config{Container: "etcd-backups", EndpointOverride: "http://127.0.0.1:9000"}, secretDir{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resolve(t, c), "http://127.0.0.1:9000/etcd-backups"; got != want {
		t.Fatalf("OSS request URL with an IP endpoint %s, want %s", got, want)
	}
}

// openS3 copies staged uploads with the provider's CopyObject limit (OSS's is 1 GiB, ossMaxSingleCopy):
// above it the copy is a multipart upload of copied parts. The limit is lowered here to keep the object
// small; a copy in parts of a 12 MiB object is one 256 MiB-sized part, so its ETag ends in "-1", which
// neither a CopyObject nor the 5 MiB-part upload produces.
func TestStagedCopyHonoursTheProvidersCopyLimit(t *testing.T) {
	srv := s3server.Start(t)
	srv.CreateBucket(t, "limit")
	data := fullSnapshotBytes(12<<20, 3)
	for i, tc := range []struct {
		limit   int64
		inParts bool
	}{{0, false}, {6 << 20, true}} {
		cfg := s3Config{provider: ProviderOSS, bucket: "limit", region: srv.Region, endpoint: srv.Endpoint, accessKeyID: srv.AccessKey,
			secretAccessKey: srv.SecretKey, forcePathStyle: true, maxSingleCopy: tc.limit}
		store, err := openS3(t.Context(), cfg, "etcd", Config{}.transfers(), testr.New(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		snap := snapshot.NewFull(int64(10+i), time.Unix(1700000000, 0), snapshot.CompressionNone, false)
		saved, err := store.(StagedSaver).SaveStaged(t.Context(), bytes.NewReader(data), func() (*snapshot.Snapshot, error) { return snap, nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := fetch(t, store, saved); !bytes.Equal(got, data) {
			t.Fatalf("limit %d: fetched %d bytes differ from the %d saved", tc.limit, len(got), len(data))
		}
		head, err := srv.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("limit"), Key: aws.String(snap.Key("etcd"))})
		if err != nil {
			t.Fatal(err)
		}
		if etag := strings.Trim(aws.ToString(head.ETag), `"`); strings.HasSuffix(etag, "-1") != tc.inParts {
			t.Fatalf("limit %d: snapshot ETag %q; copied in parts: %v, want %v", tc.limit, etag, !tc.inParts, tc.inParts)
		}
	}
}
