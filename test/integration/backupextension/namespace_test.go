package backupextension_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// waitForError waits until the entry reports an Error whose description contains text.
func waitForError(t *testing.T, be *extensionsv1alpha1.BackupEntry, text string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, be)
		g.Expect(be.Status.LastOperation).NotTo(BeNil())
		g.Expect(be.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateError))
		g.Expect(be.Status.LastError).NotTo(BeNil())
		g.Expect(be.Status.LastError.Description).To(ContainSubstring(text))
	}, timeout, interval).Should(Succeed())
}

// noHotLoop checks that the controller leaves the entry alone once it is done: every attempt rewrites the
// status, so an unchanged resourceVersion means no attempt was made.
func noHotLoop(t *testing.T, be *extensionsv1alpha1.BackupEntry) {
	t.Helper()
	version := be.ResourceVersion
	NewWithT(t).Consistently(func(g Gomega) string {
		get(g, be)
		return be.ResourceVersion
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(version))
}

// notWrittenNotes are the notes of the events saying that the entry's etcd backup secret was not written.
func notWrittenNotes(be *extensionsv1alpha1.BackupEntry) func(g Gomega) []string {
	return notesOf(be.Name, corev1.EventTypeNormal, "EtcdBackupSecretNotWritten")
}

// As Gardener's generic BackupEntry actuator: an entry whose shoot namespace does not exist succeeds
// without writing the etcd backup secret (an entry outlives its shoot by the deletion grace period, and
// gardenlet keeps reconciling it), and an event says why. When the namespace is created, the entry is
// reconciled again and writes the secret.
func TestEntryWithoutItsShootNamespaceSucceedsAndWritesTheSecretWhenItAppears(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	namespace := "shoot--dev--" + rand.String(8)
	be := newEntry(t, bb, entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(be.Status.EtcdBackupSecretRef).To(BeNil())
	g.Eventually(notWrittenNotes(be), timeout, interval).
		Should(ContainElement(ContainSubstring(`shoot namespace "` + namespace + `" does not exist`)))
	noHotLoop(t, be)

	// No operation annotation: only the namespace watch can make this pass.
	g.Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getSecret(g, namespace, "etcd-backup").Data).To(HaveKeyWithValue("bucketName", []byte(bb.Name)))
	}, timeout, interval).Should(Succeed())
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	deleteAndWaitGone(t, be)
}

// envtest runs no namespace controller, so a deleted namespace stays Terminating: the state a shoot
// namespace is in while the shoot is being deleted. The entry succeeds without writing into it, and
// gardenlet's next reconcile does the same.
func TestEntryOfATerminatingNamespaceSucceedsWithoutWritingTheSecret(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	namespace := newShootNamespace(t)
	g.Expect(env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	be := newEntry(t, bb, entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Eventually(notWrittenNotes(be), timeout, interval).
		Should(ContainElement(ContainSubstring(`shoot namespace "` + namespace + `" is being deleted`)))
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())
	noHotLoop(t, be)

	annotate(t, be, extensionsv1alpha1.OperationReconcile)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())
	deleteAndWaitGone(t, be)
}

// The entry name picks the namespace the etcd backup secret is written into. An entry whose name leads to a
// namespace that is no shoot's control plane (kube-system here) is refused by the webhook (sweep_test.go);
// one that got past it (bypassWebhookLabel) is refused by the controller with metadata.name named, and
// nothing is written into that namespace.
func TestEntryNamedAfterANonShootNamespaceWritesNothingThere(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	for _, namespace := range []string{"kube-system", "garden"} {
		name := entryName(namespace)
		secret := createSecret(t, "entry-"+name, map[string][]byte{"token": []byte("t")})
		be := &extensionsv1alpha1.BackupEntry{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{bypassWebhookLabel: ""}},
			Spec: extensionsv1alpha1.BackupEntrySpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: bb.Spec.Type},
				Region:      bb.Spec.Region,
				BucketName:  bb.Name,
				SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
			},
		}
		g.Expect(env.Client.Create(ctx, be)).To(Succeed())
		t.Cleanup(func() { forceRemove(t, be) })
		waitForError(t, be, "metadata.name")
		g.Expect(be.Status.LastError.Description).To(ContainSubstring("no shoot namespace"))
		g.Expect(be.Status.EtcdBackupSecretRef).To(BeNil())
		g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue(), "nothing may be written into %s", namespace)
	}
}
