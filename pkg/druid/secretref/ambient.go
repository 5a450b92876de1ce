package secretref

import (
	"fmt"

	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// AmbientStoreProblems describes why the Etcd's backup store cannot work without spec.backup.store.secretRef,
// empty when it has one or needs none. Without a secret the sidecar uses the pod's own identity (ambient
// credentials, backupsecret.AmbientCredentials), which only S3 and GCS can; and it has no bucketName key to
// fall back on, so the store must name its container (Local has a default one).
func AmbientStoreProblems(etcd *druidv1alpha1.Etcd) []string {
	store := etcd.Spec.Backup.Store
	if store == nil || store.Provider == nil || (store.SecretRef != nil && store.SecretRef.Name != "") {
		return nil
	}
	provider, _ := druidv1alpha1.CanonicalStorageProvider(*store.Provider)
	if !backupsecret.AmbientCredentials(provider) {
		return []string{fmt.Sprintf("spec.backup.store.secretRef is required for provider %s: its client takes credentials only from the backup secret (only S3 and GCS can use the pod's own identity)", provider)}
	}
	if provider != druidv1alpha1.StorageProviderLocal && ptr.Deref(store.Container, "") == "" {
		return []string{fmt.Sprintf("spec.backup.store.container is required without spec.backup.store.secretRef: provider %s otherwise takes the bucket from the secret's %q", provider, backupsecret.KeyBucketName)}
	}
	return nil
}
