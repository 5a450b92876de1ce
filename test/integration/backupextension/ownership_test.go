package backupextension_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

// An etcd-backup secret that no backup entry wrote (no created-by annotation: an operator's hand-made secret,
// another tool's) is not overwritten: the entry fails with the reason in lastError and a warning event, and the
// secret keeps its data. Annotating it with created-by hands it over; the next reconcile then writes it.
func TestEntryLeavesAnEtcdBackupSecretNoEntryWroteUntouched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace := newShootNamespace(t)
	stranger := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: namespace, Labels: map[string]string{"written-by": "operator"}},
		Data:       map[string][]byte{"bucketName": []byte("the-operators-bucket"), "token": []byte("operator")},
	}
	g.Expect(env.Client.Create(ctx, stranger)).To(Succeed())

	be := newEntry(t, bb, entryName(namespace), map[string][]byte{"token": []byte("entry")})
	t.Cleanup(func() { deleteAndWaitGone(t, be) })
	waitForError(t, be, "etcd backup secret "+namespace+"/etcd-backup was not written by a backup entry")
	g.Expect(be.Status.LastError.Description).To(ContainSubstring(backupentry.CreatedByAnnotation))
	g.Expect(be.Status.EtcdBackupSecretRef).To(BeNil())
	g.Eventually(warningNotes(be.Name), timeout, interval).Should(ContainElement(ContainSubstring("was not written by a backup entry")))
	secret := getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(Equal(stranger.Data), "the stranger's secret keeps its data")
	g.Expect(secret.Annotations).NotTo(HaveKey(backupentry.CreatedByAnnotation))
	g.Expect(secret.ResourceVersion).To(Equal(stranger.ResourceVersion), "the stranger's secret is not written at all")

	// The operator hands the secret over; gardenlet's next reconcile request writes it.
	metav1.SetMetaDataAnnotation(&secret.ObjectMeta, backupentry.CreatedByAnnotation, be.Name)
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	get(g, be)
	metav1.SetMetaDataAnnotation(&be.ObjectMeta, extensionsv1alpha1.OperationAnnotation, extensionsv1alpha1.OperationReconcile)
	g.Expect(env.Client.Update(ctx, be)).To(Succeed())
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	secret = getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(HaveKeyWithValue("token", []byte("entry")))
	g.Expect(secret.Data).To(HaveKeyWithValue("bucketName", []byte(bb.Name)))
}
