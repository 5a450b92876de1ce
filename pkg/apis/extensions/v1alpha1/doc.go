// Package v1alpha1 holds the parts of extensions.gardener.cloud/v1alpha1 that the etcd backup flow uses:
// BackupBucket and BackupEntry (as Gardener writes them). The JSON names match what gardenlets and
// provider extensions exchange today; the BackupEntry status additionally carries the reference of the etcd
// backup secret it wrote, an optional field of ours.
//
// +kubebuilder:object:generate=true
// +groupName=extensions.gardener.cloud
package v1alpha1
