package backupextension_test

import (
	"testing"

	. "github.com/onsi/gomega"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// As Gardener's reconcilers do, the extension puts its finalizer on the bucket and entry secrets while it
// may still need their credentials — to delete the bucket or the entry's backups — and removes it once the
// object is deleted (or migrated), so gardenlet cannot remove the credentials from under a deletion.
func TestBucketAndEntrySecretsCarryTheFinalizerUntilDeleted(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	g.Expect(getSecret(g, "garden", bb.Spec.SecretRef.Name).Finalizers).To(ContainElement(extensionsv1alpha1.BackupBucketFinalizer))

	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(getSecret(g, "garden", be.Spec.SecretRef.Name).Finalizers).To(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))

	deleteAndWaitGone(t, be)
	g.Expect(getSecret(g, "garden", be.Spec.SecretRef.Name).Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	deleteAndWaitGone(t, bb)
	g.Expect(getSecret(g, "garden", bb.Spec.SecretRef.Name).Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupBucketFinalizer))
}

// A migrated entry's secret is released as well: the destination seed's gardenlet owns it from now on.
func TestMigratedEntryReleasesItsSecret(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(getSecret(g, "garden", be.Spec.SecretRef.Name).Finalizers).To(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))

	annotate(t, be, extensionsv1alpha1.OperationMigrate)
	eventuallyOperationSucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus }, extensionsv1alpha1.LastOperationTypeMigrate)
	g.Expect(getSecret(g, "garden", be.Spec.SecretRef.Name).Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	deleteAndWaitGone(t, be)
}
