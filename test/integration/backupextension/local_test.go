package backupextension_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

func TestLocalBucketEntrySecretAndCleanup(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	g.Expect(bb.Finalizers).To(ContainElement(extensionsv1alpha1.BackupBucketFinalizer))
	g.Expect(bb.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeCreate))
	bucketDir := filepath.Join(localRoot, bb.Name)
	g.Expect(bucketDir).To(BeADirectory())
	g.Expect(bb.Status.GeneratedSecretRef).To(Equal(&corev1.SecretReference{Name: "generated-bucket-" + bb.Name, Namespace: "garden"}))
	g.Expect(getSecret(g, "garden", "generated-bucket-"+bb.Name).Data).To(HaveKeyWithValue("hostPath", []byte(localRoot)))

	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), map[string][]byte{"fromEntry": []byte("kept")})
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	secret := getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(Equal(map[string][]byte{
		"fromEntry":  []byte("kept"),
		"bucketName": []byte(bb.Name),
		"hostPath":   []byte(localRoot),
	}))
	g.Expect(secret.Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name))

	// Snapshots of this entry and of another entry in the same bucket.
	snapshot := filepath.Join(bucketDir, be.Name, "etcd-main", "v2", "Full-00000000-00000001-1")
	other := filepath.Join(bucketDir, be.Name+"x", "etcd-main", "v2", "Full-00000000-00000001-1")
	for _, f := range []string{snapshot, other} {
		g.Expect(os.MkdirAll(filepath.Dir(f), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(f, []byte("snapshot"), 0o644)).To(Succeed())
	}

	deleteAndWaitGone(t, be)
	g.Expect(filepath.Join(bucketDir, be.Name)).NotTo(BeAnExistingFile())
	g.Expect(other).To(BeARegularFile())
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())

	deleteAndWaitGone(t, bb)
	g.Expect(bucketDir).NotTo(BeAnExistingFile())
	g.Expect(secretGone("garden", "generated-bucket-"+bb.Name)()).To(BeTrue())
}

func TestLocalBucketInConfiguredDirectoryReachesTheEntry(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()
	bb := newBucket(t, "local", nil, `{"hostPath":"`+root+`"}`)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	g.Expect(filepath.Join(root, bb.Name)).To(BeADirectory())
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	// gardenlet copies the bucket's provider status into the entry.
	namespace := newShootNamespace(t)
	be := newEntry(t, bb, "source-"+entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "source-etcd-backup", Namespace: namespace}))
	g.Expect(getSecret(g, namespace, "source-etcd-backup").Data).To(HaveKeyWithValue("hostPath", []byte(root)))
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue(), "a source entry leaves the regular secret alone")
	deleteAndWaitGone(t, be)
	g.Expect(secretGone(namespace, "source-etcd-backup")()).To(BeTrue())
}
