package statefulset

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// canonicalProviders maps every provider name an Etcd may carry (including Gardener's aliases) to the name
// the sidecar's --storage-provider flag expects.
var canonicalProviders = map[druidv1alpha1.StorageProvider]druidv1alpha1.StorageProvider{
	druidv1alpha1.StorageProviderLocal:     druidv1alpha1.StorageProviderLocal,
	druidv1alpha1.StorageProviderS3:        druidv1alpha1.StorageProviderS3,
	druidv1alpha1.StorageProviderAWS:       druidv1alpha1.StorageProviderS3,
	druidv1alpha1.StorageProviderABS:       druidv1alpha1.StorageProviderABS,
	druidv1alpha1.StorageProviderAzure:     druidv1alpha1.StorageProviderABS,
	druidv1alpha1.StorageProviderGCS:       druidv1alpha1.StorageProviderGCS,
	druidv1alpha1.StorageProviderGCP:       druidv1alpha1.StorageProviderGCS,
	druidv1alpha1.StorageProviderSwift:     druidv1alpha1.StorageProviderSwift,
	druidv1alpha1.StorageProviderOpenStack: druidv1alpha1.StorageProviderSwift,
	druidv1alpha1.StorageProviderOSS:       druidv1alpha1.StorageProviderOSS,
	druidv1alpha1.StorageProviderAlicloud:  druidv1alpha1.StorageProviderOSS,
	druidv1alpha1.StorageProviderECS:       druidv1alpha1.StorageProviderECS,
	druidv1alpha1.StorageProviderDell:      druidv1alpha1.StorageProviderECS,
	druidv1alpha1.StorageProviderOCS:       druidv1alpha1.StorageProviderOCS,
	druidv1alpha1.StorageProviderOpenShift: druidv1alpha1.StorageProviderOCS,
}

// credentialsEnv names, per canonical provider, the environment variable through which the sidecar finds
// the mounted backup secret (the names the deployed sidecars read).
var credentialsEnv = map[druidv1alpha1.StorageProvider]string{
	druidv1alpha1.StorageProviderS3:    "AWS_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderABS:   "AZURE_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderGCS:   "GOOGLE_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderSwift: "OPENSTACK_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderOSS:   "ALICLOUD_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderECS:   "ECS_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderOCS:   "OPENSHIFT_APPLICATION_CREDENTIALS",
}

// Local provider facts (shared/reference/backup-restore.md).
const (
	// LocalHostPathKey is the backup secret key naming the node directory that holds the buckets.
	LocalHostPathKey = "hostPath"
	// DefaultLocalHostPath is used when the backup secret has no hostPath.
	DefaultLocalHostPath = "/etc/gardener/local-backupbuckets"
	// DefaultLocalContainer is the sidecar's container when spec.backup.store.container is unset.
	DefaultLocalContainer = "default.bkp"
	// LocalHome is HOME of uid 65532; the sidecar's Local store root is $HOME/<container>.
	LocalHome = "/home/nonroot"
)

// storageProvider returns the canonical provider of the Etcd's store, or "" without a store or provider.
func storageProvider(etcd *druidv1alpha1.Etcd) druidv1alpha1.StorageProvider {
	return CanonicalProvider(etcd.Spec.Backup.Store)
}

// localContainer is the Local provider's container directory name.
func localContainer(etcd *druidv1alpha1.Etcd) string { return LocalContainer(etcd.Spec.Backup.Store) }
