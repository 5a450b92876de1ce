package snapstore

import (
	"fmt"
	"slices"
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Defaults of the store configuration, as the upstream sidecar's flags have them.
const (
	// DefaultLocalContainer is the Local provider's container when none is configured.
	DefaultLocalContainer = "default.bkp"
	// DefaultChunkSize is the part size of multipart uploads (S3's minimum part size).
	DefaultChunkSize = 5 << 20
	// DefaultMaxParallelChunks is how many parts are uploaded at once.
	DefaultMaxParallelChunks = 5
	// DefaultStallTimeout is how long the store may hold an upload without the driver asking for more
	// bytes (ErrUploadStalled), and a download's request or one read of its body (ErrDownloadStalled).
	// Upload drivers read a few parts ahead (S3 up to MaxParallelChunks + 2), so at an upload's end up to
	// that many parts must move within it: with the defaults 35 MiB in 5 minutes, about 120 KB/s. A read
	// of a download returns what has arrived, a few KiB, so a download is given up only when the store
	// sends next to nothing.
	DefaultStallTimeout = 5 * time.Minute
)

// Config selects and configures a store. Provider, Container, Prefix and EndpointOverride come from the
// command line (--storage-provider, --store-container, --store-prefix, --store-endpoint-override),
// the credentials from SecretDir.
type Config struct {
	// Provider is the provider name or one of its aliases (aws, azure, gcp, openstack).
	Provider druidv1alpha1.StorageProvider
	// Container is the bucket, or for Local the directory below LocalRoot. Empty means the secret's
	// bucketName key, then (Local only) DefaultLocalContainer.
	Container string
	// Prefix is the path of this cluster's snapshots inside the container.
	Prefix string
	// EndpointOverride replaces the provider's endpoint (S3-compatible servers, emulators); it takes
	// precedence over an endpoint in the secret.
	EndpointOverride string
	// SecretDir is the mounted backup secret: one file per key. Not needed for Local.
	SecretDir string
	// SecretValues are backup secret keys handed over as values instead of files (upstream druid
	// passes ECS its keys as environment variables, see backupsecret.ECSKeyEnv); they take precedence
	// over files of SecretDir.
	SecretValues map[string]string
	// LocalRoot is the directory holding the Local provider's containers; empty means $HOME, as the
	// upstream sidecar (the node's host path is mounted at the home directory of the sidecar's user).
	LocalRoot string
	// Upload tunes multipart uploads.
	Upload UploadOptions
	// DownloadStallTimeout gives up a download (Fetch) the store has held that long: its request
	// unanswered, or a read of its body waiting for bytes (--download-stall-timeout, ErrDownloadStalled);
	// and a listing whose request for one page it has held that long (ErrListingStalled). 0 means
	// DefaultStallTimeout.
	DownloadStallTimeout time.Duration
}

// transfers are what a store takes of Config for its uploads and downloads, defaults applied.
type transfers struct {
	upload        UploadOptions
	downloadStall time.Duration
}

func (c Config) transfers() transfers {
	tr := transfers{upload: c.Upload.withDefaults(), downloadStall: c.DownloadStallTimeout}
	if tr.downloadStall <= 0 {
		tr.downloadStall = DefaultStallTimeout
	}
	return tr
}

// UploadOptions tunes uploads of large snapshots. Memory held by an upload is about
// ChunkSize × (MaxParallelChunks + 1) for S3 regardless of the snapshot size, and for Swift up to
// snapshots of 250 chunks (its segments then double in size every 250, see swiftSegmentSize).
type UploadOptions struct {
	// ChunkSize is the part size in bytes (--min-chunk-size); 0 means DefaultChunkSize.
	ChunkSize int
	// MaxParallelChunks is how many parts upload concurrently (--max-parallel-chunk-uploads); 0 means
	// DefaultMaxParallelChunks.
	MaxParallelChunks int
	// StallTimeout gives up an upload the store has held that long without the driver asking for more
	// bytes (--upload-stall-timeout, ErrUploadStalled); 0 means DefaultStallTimeout.
	StallTimeout time.Duration
}

func (o UploadOptions) withDefaults() UploadOptions {
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.MaxParallelChunks <= 0 {
		o.MaxParallelChunks = DefaultMaxParallelChunks
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	return o
}

// Provider is the canonical provider a configured name or alias stands for.
type Provider string

// The providers this package implements.
const (
	ProviderLocal Provider = Provider(druidv1alpha1.StorageProviderLocal)
	ProviderS3    Provider = Provider(druidv1alpha1.StorageProviderS3)
	ProviderABS   Provider = Provider(druidv1alpha1.StorageProviderABS)
	ProviderGCS   Provider = Provider(druidv1alpha1.StorageProviderGCS)
	ProviderOSS   Provider = Provider(druidv1alpha1.StorageProviderOSS)
	ProviderECS   Provider = Provider(druidv1alpha1.StorageProviderECS)
	ProviderOCS   Provider = Provider(druidv1alpha1.StorageProviderOCS)
	ProviderSwift Provider = Provider(druidv1alpha1.StorageProviderSwift)
)

// implemented are the canonical providers New can open.
var implemented = []Provider{ProviderLocal, ProviderS3, ProviderABS, ProviderGCS, ProviderSwift, ProviderOSS, ProviderECS, ProviderOCS}

// CanonicalProvider resolves aliases (druidv1alpha1.CanonicalStorageProvider: aws → S3, alicloud → OSS,
// dell → ECS, openstack → Swift, …) so that every resource written by existing landscapes keeps working, and rejects
// providers that are unknown or not implemented.
func CanonicalProvider(p druidv1alpha1.StorageProvider) (Provider, error) {
	if p == "" {
		return "", fmt.Errorf("no storage provider configured")
	}
	canonical, ok := druidv1alpha1.CanonicalStorageProvider(p)
	if ok && slices.Contains(implemented, Provider(canonical)) {
		return Provider(canonical), nil
	}
	return "", fmt.Errorf("storage provider %q is not supported (supported: Local, S3/aws, ABS/azure, GCS/gcp, Swift/openstack, OSS/alicloud, ECS/dell, OCS/openshift)", p)
}
