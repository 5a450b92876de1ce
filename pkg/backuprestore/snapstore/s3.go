package snapstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"github.com/go-logr/logr"
	"gocloud.dev/blob/s3blob"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// s3Config is the resolved configuration of a store reached through the S3 API: S3 itself and the
// S3-compatible providers (ECS, OCS, OSS), each of which resolves it from its own secret format
// (s3ConfigFrom, s3CompatibleConfigFrom, ossConfigFrom); openS3 opens any of them.
type s3Config struct {
	provider        Provider // for logs and errors
	bucket          string
	region          string
	endpoint        string // empty: AWS
	accessKeyID     string
	secretAccessKey string
	// identity, when set, replaces the static key pair: a workload identity or the pod's own (s3identity.go).
	identity           *s3Identity
	forcePathStyle     bool
	insecureSkipVerify bool
	trustedCACert      []byte // PEM, added to the system roots
	// maxSingleCopy is the largest object the server copies with one CopyObject; 0 means S3's limit.
	maxSingleCopy int64
}

// s3ConfigFrom resolves an S3 store from the S3 secret format: static keys, or a workload identity (a role
// assumed with the secret's token file); without any backup secret, the pod's ambient credentials.
func s3ConfigFrom(cfg Config, secret secretDir) (s3Config, error) {
	if secret.absent() {
		return s3AmbientConfig(cfg)
	}
	if err := secret.checkDir(ProviderS3); err != nil {
		return s3Config{}, err
	}
	c := s3Config{provider: ProviderS3}
	var err error
	if c.bucket, err = containerFrom(cfg, secret, ProviderS3, ""); err != nil {
		return s3Config{}, err
	}
	if c.region, err = secret.required(backupsecret.KeyRegion); err != nil {
		return s3Config{}, err
	}
	if c.identity, err = s3WebIdentityFrom(secret); err != nil {
		return s3Config{}, err
	}
	if c.identity == nil {
		if err := secret.requiredInto(map[string]*string{
			backupsecret.KeyAccessKeyID: &c.accessKeyID, backupsecret.KeySecretAccessKey: &c.secretAccessKey,
		}); err != nil {
			return s3Config{}, err
		}
	}
	if c.endpoint, _, err = secret.optional(backupsecret.KeyEndpoint); err != nil {
		return s3Config{}, err
	}
	if cfg.EndpointOverride != "" {
		c.endpoint = cfg.EndpointOverride
	}
	c.endpoint = withScheme(c.endpoint, false)
	if c.forcePathStyle, err = secret.boolean(backupsecret.KeyS3ForcePathStyle); err != nil {
		return s3Config{}, err
	}
	if c.insecureSkipVerify, err = secret.boolean(backupsecret.KeyInsecureSkipVerify); err != nil {
		return s3Config{}, err
	}
	if c.trustedCACert, _, err = secret.raw(backupsecret.KeyTrustedCACert); err != nil {
		return s3Config{}, err
	}
	if len(c.trustedCACert) > 0 {
		if _, err := c.rootCAs(); err != nil {
			return s3Config{}, fmt.Errorf("key %q of the backup secret %s: %w", backupsecret.KeyTrustedCACert, secret, err)
		}
	}
	return c, nil
}

// withScheme completes an endpoint given as host[:port] with https://, or http:// when plain.
func withScheme(endpoint string, plain bool) string {
	if endpoint == "" || strings.Contains(endpoint, "://") {
		return endpoint
	}
	if plain {
		return "http://" + endpoint
	}
	return "https://" + endpoint
}

// rootCAs is the system pool plus the trusted CA of the secret.
func (c s3Config) rootCAs() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(c.trustedCACert) {
		return nil, fmt.Errorf("no PEM certificate found")
	}
	return pool, nil
}

// client builds the S3 client. Checksums are computed only where the API requires them: S3-compatible
// servers differ in their support of the newer flexible checksums, and snapshot contents carry their
// own sha256 which the restorer verifies.
func (c s3Config) client() (*s3.Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.insecureSkipVerify} //nolint:gosec // opt-in via the secret, for self-signed test endpoints
	if len(c.trustedCACert) > 0 {
		pool, err := c.rootCAs()
		if err != nil {
			return nil, err
		}
		tlsConfig.RootCAs = pool
	}
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.TLSClientConfig = tlsConfig
	})
	creds, region, err := c.credentials(httpClient)
	if err != nil {
		return nil, err
	}
	opts := s3.Options{
		Region:                     region,
		Credentials:                creds,
		UsePathStyle:               c.forcePathStyle,
		HTTPClient:                 httpClient,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if c.endpoint != "" {
		opts.BaseEndpoint = aws.String(c.endpoint)
	}
	return s3.New(opts), nil
}

func openS3(ctx context.Context, cfg s3Config, prefix string, tr transfers, log logr.Logger) (SnapStore, error) {
	client, err := cfg.client()
	if err != nil {
		return nil, fmt.Errorf("configuring %s client for bucket %s: %w", cfg.provider, cfg.bucket, err)
	}
	bucket, err := s3blob.OpenBucket(ctx, client, cfg.bucket, &s3blob.Options{
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	if err != nil {
		return nil, fmt.Errorf("opening %s bucket %s: %w", cfg.provider, cfg.bucket, err)
	}
	store := newBlobStore(bucket, string(cfg.provider), cfg.bucket, prefix, tr, log)
	// The transfer manager fails an upload whose source fails (no PutObject, or an abort once the
	// parts in flight are answered): cancelling it as well would abandon those parts (see stream).
	store.readErrorFailsUpload = true
	lock := readObjectLock(ctx, client, cfg.bucket, store.log)
	if lock.enabled {
		store.log.Info("The bucket has S3 Object Lock: uploads carry a checksum, deletes remove versions and leave locked ones",
			"defaultRetention", lock.defaultRetention)
		store.deleteObject = s3VersionDeleter{client: client, bucket: cfg.bucket, now: time.Now}.deleteVersions
	}
	store.beforeWrite = boundUploadMemory(uploadClient(client, cfg.plainHTTP()), tr.upload, cfg.plainHTTP() || lock.enabled)
	store.copyObject = s3Copier{client: client, bucket: cfg.bucket, concurrency: tr.upload.MaxParallelChunks, maxSingle: cfg.maxSingleCopy}.copy
	return store, nil
}

// plainHTTP tells whether the store is reached without TLS.
func (c s3Config) plainHTTP() bool {
	return strings.HasPrefix(strings.ToLower(c.endpoint), "http://")
}

// unsignedPayload is the SigV4 payload hash that leaves the body out of the signature.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// uploadClient is the client that uploads snapshot data. Over TLS the SDK already leaves the body out
// of the request signature (TLS protects it). Over plain HTTP it would hash every body with sha256 for
// the signature, and the server hash it again to check it: about a tenth of the CPU of a full snapshot
// (BenchmarkFullSnapshot). There the body goes unsigned too and is protected by a CRC32 checksum
// instead (see boundUploadMemory), which the server verifies; the snapshot's own sha256 is verified on
// restore either way. The headers of every request stay signed.
func uploadClient(client *s3.Client, plainHTTP bool) *s3.Client {
	if !plainHTTP {
		return client
	}
	return s3.New(client.Options(), func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			// First in the finalize step: the checksum middleware (which would compute the sha256 in
			// the same pass as its checksum) and the signer's payload hash both keep a hash already set.
			return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("UnsignedPayloadOverHTTP",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, unsignedPayload), in)
				}), middleware.Before)
		})
	})
}

// abortTimeout bounds the clean-up of a failed multipart upload.
const abortTimeout = 30 * time.Second

// boundUploadMemory reconfigures the transfer manager s3blob creates for each upload so that it
// switches to multipart at one chunk instead of its fixed 16 MiB (an upload then holds about
// ChunkSize × (MaxParallelChunks + 2) bytes, whatever the snapshot size) and aborts failed multipart
// uploads even though their context was cancelled.
//
// With checksum, each request carries a CRC32 checksum, which the server verifies: over plain HTTP (see
// uploadClient), where it goes in a header computed before the part is sent, and on a bucket with Object
// Lock, where AWS requires one (s3objectlock.go). Over TLS the SDK sends it as a trailer in aws-chunked
// encoding, which not every S3-compatible server understands: other buckets over TLS upload without one.
func boundUploadMemory(client *s3.Client, upload UploadOptions, checksum bool) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		var tm *transfermanager.Client
		if !as(&tm) || tm == nil {
			return errors.New("the S3 driver does not expose its transfer manager")
		}
		*tm = *transfermanager.New(client, func(o *transfermanager.Options) {
			o.PartSizeBytes = int64(upload.ChunkSize)
			o.MultipartUploadThreshold = int64(upload.ChunkSize)
			o.Concurrency = upload.MaxParallelChunks
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			if checksum {
				o.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmCrc32
			}
			// When the caller cancels the upload's context, the abort of the multipart upload needs
			// a context of its own or the parts stay in the bucket.
			o.FailTimeout = abortTimeout
		})
		return nil
	}
}
