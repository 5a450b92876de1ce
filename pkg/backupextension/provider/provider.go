// Package provider is the seam between the BackupBucket/BackupEntry controllers and the object stores
// they manage. The controllers own the extension conventions and the etcd backup secret; a Provider only
// knows its store: create and delete buckets, name the keys the etcd sidecar needs, and delete an entry's
// objects.
package provider

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// BucketRequest is one bucket as a provider sees it.
type BucketRequest struct {
	// Name is the bucket name (the BackupBucket name).
	Name string
	// Region is the region from the BackupBucket spec.
	Region string
	// ProviderConfig is the BackupBucket's provider-specific configuration.
	ProviderConfig *runtime.RawExtension
	// Credentials is the data of the bucket secret (garden/bucket-<name>).
	Credentials map[string][]byte
}

// BucketResult is what a provider hands back after ensuring a bucket.
type BucketResult struct {
	// GeneratedSecretData is written to garden/generated-bucket-<name> and referenced by the status.
	GeneratedSecretData map[string][]byte
	// ProviderStatus lands in status.providerStatus; gardenlet copies it into every BackupEntry of the bucket.
	ProviderStatus *runtime.RawExtension
}

// EntryRequest is one BackupEntry as a provider sees it: a prefix inside a bucket.
type EntryRequest struct {
	// Name is the entry name, which is also the object prefix `<Name>/` inside the bucket.
	Name string
	// BucketName is the bucket holding the entry.
	BucketName string
	// Region is the region from the BackupEntry spec.
	Region string
	// ProviderConfig is the BackupEntry's provider-specific configuration.
	ProviderConfig *runtime.RawExtension
	// BucketProviderStatus is the bucket's provider status as gardenlet copied it into the entry.
	BucketProviderStatus *runtime.RawExtension
	// Credentials is the data of the entry secret (garden/entry-<name>); of a workload identity only its
	// configuration (`config`).
	Credentials map[string][]byte
	// WorkloadIdentityToken is the token gardenlet's token requestor wrote into a workload-identity entry
	// secret (empty for static credentials, or before the requestor wrote one). DeleteEntry presents it; it is
	// never copied into the etcd backup secret, which receives a token of its own.
	WorkloadIdentityToken []byte
}

// Provider manages buckets and entries of one provider type.
type Provider interface {
	// EnsureBucket creates the bucket when it does not exist; it is called on every reconcile.
	EnsureBucket(ctx context.Context, req BucketRequest) (BucketResult, error)
	// DeleteBucket deletes the bucket and everything in it; a missing bucket is not an error.
	DeleteBucket(ctx context.Context, req BucketRequest) error
	// EtcdSecretData returns the keys the provider adds to the etcd backup secret, beyond the entry
	// credentials and bucketName (for example the host directory of the local provider).
	EtcdSecretData(req EntryRequest) (map[string][]byte, error)
	// DeleteEntry deletes every object under `<bucket>/<entry>/`; a missing bucket or prefix is not an error.
	DeleteEntry(ctx context.Context, req EntryRequest) error
}

// Registry maps provider types (spec.type) to providers.
type Registry map[string]Provider

// Supports tells whether a provider is registered for the type.
func (r Registry) Supports(providerType string) bool {
	_, ok := r[providerType]
	return ok
}

// ValidatePathSegment rejects names that would escape their place when used as a directory or object-prefix
// segment; bucket and entry names come from cluster objects and end up in paths.
func ValidatePathSegment(kind, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("invalid %s name %q: must be a single non-empty path segment", kind, name)
	}
	return nil
}
