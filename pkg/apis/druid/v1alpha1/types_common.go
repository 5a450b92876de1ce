package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// SecretReference points at one key of a secret; the key defaults to `ca.crt` (see DefaultCADataKey).
type SecretReference struct {
	corev1.SecretReference `json:",inline"`
	// DataKey is the key of the secret's data that holds the value (a CA bundle for CA references).
	// +optional
	DataKey *string `json:"dataKey,omitempty"`
}

// TLSConfig names the secrets that make up one TLS endpoint. Server and client certificates live under the
// keys `tls.crt` and `tls.key` of their secrets.
type TLSConfig struct {
	// TLSCASecretRef is the CA bundle used to verify peers or clients.
	TLSCASecretRef SecretReference `json:"tlsCASecretRef"`
	// ServerTLSSecretRef is the server certificate and key.
	ServerTLSSecretRef corev1.SecretReference `json:"serverTLSSecretRef"`
	// ClientTLSSecretRef is the client certificate and key used by the sidecar and other clients.
	// +optional
	ClientTLSSecretRef corev1.SecretReference `json:"clientTLSSecretRef,omitempty"`
}

// PeerTLSConfig is the TLS configuration of the peer (member to member) endpoint.
type PeerTLSConfig struct {
	TLSConfig `json:",inline"`
	// SkipClientSANVerification turns off the SAN check of peer client certificates.
	// +optional
	SkipClientSANVerification *bool `json:"skipClientSANVerification,omitempty"`
}

// StorageProvider names an object store implementation (or one of its aliases).
type StorageProvider string

// The storage providers and their aliases as existing landscapes write them.
const (
	StorageProviderLocal     StorageProvider = "Local"
	StorageProviderS3        StorageProvider = "S3"
	StorageProviderAWS       StorageProvider = "aws"
	StorageProviderABS       StorageProvider = "ABS"
	StorageProviderAzure     StorageProvider = "azure"
	StorageProviderGCS       StorageProvider = "GCS"
	StorageProviderGCP       StorageProvider = "gcp"
	StorageProviderSwift     StorageProvider = "Swift"
	StorageProviderOpenStack StorageProvider = "openstack"
	StorageProviderOSS       StorageProvider = "OSS"
	StorageProviderAlicloud  StorageProvider = "alicloud"
	StorageProviderECS       StorageProvider = "ECS"
	StorageProviderDell      StorageProvider = "dell"
	StorageProviderOCS       StorageProvider = "OCS"
	StorageProviderOpenShift StorageProvider = "openshift"
	// StorageProviderStackit is STACKIT's infrastructure name; its object storage is S3-compatible, and the
	// upstream etcd-druid maps it to S3 as well.
	StorageProviderStackit StorageProvider = "stackit"
)

// StoreSpec locates the object store of an etcd cluster's backups.
type StoreSpec struct {
	// Container is the bucket (or, for Local, the directory below the host path). Any string the upstream
	// etcd-druid accepted is accepted (e.g. upper-case letters, which some stores allow); the validation
	// webhook warns about names that are no DNS-compatible bucket name.
	// +optional
	Container *string `json:"container,omitempty"`
	// Prefix is the path of this cluster's snapshots inside the container; Gardener uses
	// `<backupEntryName>/etcd-<role>`.
	// +kubebuilder:validation:MinLength=1
	Prefix string `json:"prefix"`
	// Provider is the object store implementation: a canonical name, an alias (KnownStorageProviders) or,
	// as the upstream CRD allows, any other string; the validation webhook refuses an unknown name on create
	// and when an update changes it.
	// +optional
	Provider *StorageProvider `json:"provider,omitempty"`
	// SecretRef is the backup secret with the provider's credentials (mounted into the sidecar).
	// +optional
	SecretRef *corev1.SecretReference `json:"secretRef,omitempty"`
	// EndpointOverride is the URL of an S3-compatible (or emulator) endpoint.
	// +optional
	EndpointOverride *string `json:"endpointOverride,omitempty"`
}
