package backupextension_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// gardenlet rotates the entry credentials and asks for a reconcile with the operation annotation; the
// generation does not change. The controller must rewrite the etcd backup secret and remove the annotation.
func TestReconcileAnnotationRewritesTheSecretAndIsRemoved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), map[string][]byte{"token": []byte("one")})
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, be) })

	entrySecret := getSecret(g, "garden", be.Spec.SecretRef.Name)
	entrySecret.Data["token"] = []byte("two")
	g.Expect(env.Client.Update(ctx, entrySecret)).To(Succeed())
	g.Consistently(func(g Gomega) []byte {
		return getSecret(g, namespace, "etcd-backup").Data["token"]
	}, "1s", "200ms").Should(Equal([]byte("one")), "without a trigger nothing is reconciled")

	get(g, be)
	generation := be.Generation
	be.Annotations = map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationReconcile}
	g.Expect(env.Client.Update(ctx, be)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, be)
		g.Expect(be.Annotations).NotTo(HaveKey(extensionsv1alpha1.OperationAnnotation))
		g.Expect(be.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeReconcile))
		g.Expect(be.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
	}, timeout, interval).Should(Succeed())
	g.Expect(be.Generation).To(Equal(generation))
	g.Expect(getSecret(g, namespace, "etcd-backup").Data).To(HaveKeyWithValue("token", []byte("two")))
}
