package backupextension_test

import (
	"testing"

	. "github.com/onsi/gomega"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

// An old BackupEntry of a deleted shoot expires after a new shoot with the same name got its namespace and
// its own entry; deleting the old entry must leave the new shoot's etcd-backup secret in place.
func TestDeletingAnOldEntryKeepsTheNewShootsSecret(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace := newShootNamespace(t)

	oldEntry := newEntry(t, bb, entryName(namespace), map[string][]byte{"generation": []byte("old")})
	eventuallySucceeded(t, oldEntry, func() *extensionsv1alpha1.DefaultStatus { return &oldEntry.Status.DefaultStatus })
	newEntry := newEntry(t, bb, entryName(namespace), map[string][]byte{"generation": []byte("new")})
	eventuallySucceeded(t, newEntry, func() *extensionsv1alpha1.DefaultStatus { return &newEntry.Status.DefaultStatus })
	secret := getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, newEntry.Name))
	g.Expect(secret.Data).To(HaveKeyWithValue("generation", []byte("new")))

	deleteAndWaitGone(t, oldEntry)
	secret = getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, newEntry.Name))
	g.Expect(secret.Data).To(HaveKeyWithValue("generation", []byte("new")))

	deleteAndWaitGone(t, newEntry)
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())
}
