package etcdvalidation

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func etcdWithBackupSecret(namespace string) *druidv1alpha1.Etcd {
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a--b"},
		Spec: druidv1alpha1.EtcdSpec{Replicas: 1, Backup: druidv1alpha1.BackupSpec{Store: &druidv1alpha1.StoreSpec{
			Prefix: "shoot--a--b/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			SecretRef: &corev1.SecretReference{Name: "etcd-backup", Namespace: namespace},
		}}},
	}
}

// TestForeignSecretRefsRatchet checks that a reference into another namespace is refused when it is new,
// and that an Etcd stored with one before the rule existed stays updatable as long as the reference stays.
func TestForeignSecretRefsRatchet(t *testing.T) {
	ctx := context.Background()
	v := EtcdValidator{}

	if _, err := v.ValidateCreate(ctx, etcdWithBackupSecret("")); err != nil {
		t.Fatalf("a reference without namespace points into the Etcd's own: %v", err)
	}
	_, err := v.ValidateCreate(ctx, etcdWithBackupSecret("garden"))
	if err == nil || !strings.Contains(err.Error(), "spec.backup.store.secretRef.namespace") {
		t.Fatalf("CREATE with a foreign namespace: want an error naming the field, got %v", err)
	}

	stored := etcdWithBackupSecret("garden")
	updated := stored.DeepCopy()
	updated.Spec.Replicas = 3
	if _, err := v.ValidateUpdate(ctx, stored, updated); err != nil {
		t.Fatalf("UPDATE that keeps an existing foreign reference must pass (ratcheting): %v", err)
	}
	updated.Spec.Backup.Store.SecretRef.Name = "other-backup"
	if _, err := v.ValidateUpdate(ctx, stored, updated); err == nil || !strings.Contains(err.Error(), "spec.backup.store.secretRef.namespace") {
		t.Fatalf("UPDATE that points the reference at another foreign secret: want an error naming the field, got %v", err)
	}
	updated.Spec.Backup.Store.SecretRef.Namespace = ""
	if _, err := v.ValidateUpdate(ctx, stored, updated); err != nil {
		t.Fatalf("moving the reference into the own namespace must pass: %v", err)
	}
}
