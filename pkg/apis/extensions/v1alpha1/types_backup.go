package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BackupBucket is a bucket in an object store that holds the backups of a seed's shoots.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=bb
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.lastOperation.state`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupBucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupBucketSpec   `json:"spec"`
	Status BackupBucketStatus `json:"status,omitempty"`
}

// BackupBucketList is a list of BackupBuckets.
//
// +kubebuilder:object:root=true
type BackupBucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupBucket `json:"items"`
}

// BackupBucketSpec is the desired bucket.
type BackupBucketSpec struct {
	DefaultSpec `json:",inline"`
	// Region of the bucket.
	Region string `json:"region"`
	// SecretRef is the secret with the credentials to manage the bucket (garden/bucket-<name>).
	SecretRef corev1.SecretReference `json:"secretRef"`
}

// BackupBucketStatus is the observed bucket.
type BackupBucketStatus struct {
	DefaultStatus `json:",inline"`
	// GeneratedSecretRef is a secret the extension generated for the bucket (garden/generated-bucket-<name>).
	// +optional
	GeneratedSecretRef *corev1.SecretReference `json:"generatedSecretRef,omitempty"`
}

// BackupEntry is the part of a BackupBucket (a prefix) that holds one shoot's etcd backups.
// Its name is `<shoot-namespace>--<shoot-uid>`, optionally prefixed with `source-`.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=be
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Bucket",type=string,JSONPath=`.spec.bucketName`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.lastOperation.state`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupEntry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupEntrySpec   `json:"spec"`
	Status BackupEntryStatus `json:"status,omitempty"`
}

// BackupEntryList is a list of BackupEntries.
//
// +kubebuilder:object:root=true
type BackupEntryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupEntry `json:"items"`
}

// BackupEntrySpec is the desired entry.
type BackupEntrySpec struct {
	DefaultSpec `json:",inline"`
	// BackupBucketProviderStatus is the provider status of the bucket, copied by gardenlet.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	BackupBucketProviderStatus *runtime.RawExtension `json:"backupBucketProviderStatus,omitempty"`
	// Region of the bucket; immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.region is immutable"
	Region string `json:"region"`
	// BucketName is the bucket that holds this entry.
	BucketName string `json:"bucketName"`
	// SecretRef is the secret with the entry's credentials (garden/entry-<name>).
	SecretRef corev1.SecretReference `json:"secretRef"`
}

// BackupEntryStatus is the observed entry.
type BackupEntryStatus struct {
	DefaultStatus `json:",inline"`
	// EtcdBackupSecretRef references the etcd backup secret the extension wrote for this entry
	// (`<shoot-namespace>/etcd-backup`, or `source-etcd-backup` for a source entry), so that the Gardener side
	// takes the name from here instead of assuming it. Ours; older extensions leave it empty.
	// +optional
	EtcdBackupSecretRef *corev1.SecretReference `json:"etcdBackupSecretRef,omitempty"`
}
