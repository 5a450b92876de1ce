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
)

// StoreSpec locates the object store of an etcd cluster's backups.
type StoreSpec struct {
	// Container is the bucket (or, for Local, the directory below the host path).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$')",message="must be a bucket name: 3 to 63 lower-case letters, digits, '.', '-' or '_', starting and ending with a letter or digit"
	// +optional
	Container *string `json:"container,omitempty"`
	// Prefix is the path of this cluster's snapshots inside the container; Gardener uses
	// `<backupEntryName>/etcd-<role>`.
	// +kubebuilder:validation:MinLength=1
	Prefix string `json:"prefix"`
	// Provider is the object store implementation.
	// +kubebuilder:validation:Enum=Local;S3;aws;ABS;azure;GCS;gcp;Swift;openstack;OSS;alicloud;ECS;dell;OCS;openshift
	// +optional
	Provider *StorageProvider `json:"provider,omitempty"`
	// SecretRef is the backup secret with the provider's credentials (mounted into the sidecar).
	// +optional
	SecretRef *corev1.SecretReference `json:"secretRef,omitempty"`
	// EndpointOverride is the URL of an S3-compatible (or emulator) endpoint.
	// +optional
	EndpointOverride *string `json:"endpointOverride,omitempty"`
}
