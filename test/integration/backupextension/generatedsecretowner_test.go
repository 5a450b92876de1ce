package backupextension_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// strangerGeneratedSecret creates generated-bucket-<bucket> in namespace without an ownerReference to the
// bucket: what Gardener's own provider extension leaves behind after a switch-over, or an operator's copy.
func strangerGeneratedSecret(t *testing.T, namespace, bucket string) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "generated-bucket-" + bucket, Namespace: namespace},
		Data:       map[string][]byte{"accessKeyID": []byte("the-provider-extensions")},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secret) })
	return secret
}

// expectUntouched checks that want still exists exactly as it was created.
func expectUntouched(g Gomega, want *corev1.Secret) {
	got := getSecret(g, want.Namespace, want.Name)
	g.Expect(got.UID).To(Equal(want.UID))
	g.Expect(got.ResourceVersion).To(Equal(want.ResourceVersion), "%s/%s was written", want.Namespace, want.Name)
	g.Expect(got.Data).To(Equal(want.Data))
}

// A generated-bucket-<name> secret the bucket does not own (no ownerReference with its uid) is not
// overwritten: the bucket fails naming the secret, as an entry does for an etcd-backup without created-by.
// Deleting the secret lets the next reconcile write the bucket's own.
func TestBucketLeavesAGeneratedSecretItDoesNotOwnUntouched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	name := "bb-" + rand.String(8)
	stranger := strangerGeneratedSecret(t, "garden", name)
	bb := newNamedBucket(t, name, "local", nil)
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	g.Eventually(func(g Gomega) {
		get(g, bb)
		g.Expect(bb.Status.LastError).NotTo(BeNil())
		g.Expect(bb.Status.LastError.Description).To(ContainSubstring("generated secret garden/" + stranger.Name + " is not owned by BackupBucket " + name))
	}, timeout, interval).Should(Succeed())
	g.Expect(bb.Status.GeneratedSecretRef).To(BeNil())
	g.Eventually(warningNotes(bb.Name), timeout, interval).Should(ContainElement(ContainSubstring("is not owned by BackupBucket")))
	expectUntouched(g, stranger)

	// The operator removes the stranger; gardenlet's next reconcile request writes the bucket's own.
	g.Expect(env.Client.Delete(ctx, stranger)).To(Succeed())
	annotate(t, bb, extensionsv1alpha1.OperationReconcile)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	own := getSecret(g, "garden", stranger.Name)
	g.Expect(own.Data).To(HaveKey("hostPath"))
	g.Expect(own.OwnerReferences).To(ContainElement(HaveField("UID", bb.UID)))
}

// Deleting a bucket deletes its generated secret where the status and the annotation say, but only a secret
// the bucket owns: one of the same name it never wrote (here in the namespace the annotation was moved to
// before any reconcile wrote there) is left, and an event on the bucket says so.
func TestBucketDeletionLeavesAGeneratedSecretItDoesNotOwn(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucketWithGeneratedSecretIn(t, allowedGeneratedSecretNamespace, nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	name := "generated-bucket-" + bb.Name
	stranger := strangerGeneratedSecret(t, "garden", bb.Name)

	patch := client.MergeFrom(bb.DeepCopy())
	bb.Annotations[generatedSecretNamespaceAnnotation] = "garden"
	g.Expect(env.Client.Patch(ctx, bb, patch)).To(Succeed())
	deleteAndWaitGone(t, bb)

	g.Expect(secretGone(allowedGeneratedSecretNamespace, name)()).To(BeTrue(), "the bucket's own secret is deleted")
	expectUntouched(g, stranger)
	g.Eventually(notesOf(bb.Name, corev1.EventTypeNormal, "GeneratedSecretKept"), timeout, interval).
		Should(ContainElement(ContainSubstring("garden/" + name)))
}

// status.generatedSecretRef is only a record of where the secret was written: a namespace in it that the
// extension may not write generated secrets into is never deleted from, even a secret there that names the
// bucket as its owner.
func TestBucketDeletionIgnoresAStatusRefOutsideTheAllowedNamespaces(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	name := "generated-bucket-" + bb.Name
	elsewhere := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: extensionsv1alpha1.SchemeGroupVersion.String(), Kind: "BackupBucket", Name: bb.Name, UID: bb.UID,
		}}},
		Data: map[string][]byte{"kept": []byte("yes")},
	}
	g.Expect(env.Client.Create(ctx, elsewhere)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), elsewhere) })

	patch := client.MergeFrom(bb.DeepCopy())
	bb.Status.GeneratedSecretRef = &corev1.SecretReference{Name: name, Namespace: "kube-system"}
	g.Expect(env.Client.Status().Patch(ctx, bb, patch)).To(Succeed())
	deleteAndWaitGone(t, bb)

	expectUntouched(g, elsewhere)
	g.Expect(secretGone("garden", name)()).To(BeTrue(), "the secret where the bucket wrote it is deleted")
}

// A switch-over from Gardener's provider extension: the secret it wrote has no ownerReference, and the
// bucket's status names it as the generated secret. The extension takes it over (its data replaced, owned by
// the bucket from then on) instead of failing the bucket.
func TestBucketTakesOverTheGeneratedSecretItsStatusNames(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	name := "bb-" + rand.String(8)
	previous := strangerGeneratedSecret(t, "garden", name)
	bb := newNamedBucket(t, name, "local", nil)
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	// What the provider extension recorded for this bucket before the switch-over.
	g.Eventually(func() error {
		get(g, bb)
		patch := client.MergeFrom(bb.DeepCopy())
		bb.Status.GeneratedSecretRef = &corev1.SecretReference{Name: previous.Name, Namespace: previous.Namespace}
		return env.Client.Status().Patch(ctx, bb, patch)
	}, timeout, interval).Should(Succeed())
	annotate(t, bb, extensionsv1alpha1.OperationReconcile)

	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	own := getSecret(g, "garden", previous.Name)
	g.Expect(own.UID).To(Equal(previous.UID), "the same secret, taken over")
	g.Expect(own.Data).To(HaveKey("hostPath"))
	g.Expect(own.OwnerReferences).To(ContainElement(HaveField("UID", bb.UID)))
}
