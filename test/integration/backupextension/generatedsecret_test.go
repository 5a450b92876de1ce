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

// generatedSecretNamespaceAnnotation is Gardener's per-bucket namespace of the generated secret; gardenlet
// sets it on every BackupBucket it asks to reconcile (to its own garden namespace).
const generatedSecretNamespaceAnnotation = "backupbucket.extensions.gardener.cloud/generated-secret-namespace"

// newBucketWithGeneratedSecretIn creates a local BackupBucket annotated to have its generated secret in namespace.
func newBucketWithGeneratedSecretIn(t *testing.T, namespace string, labels map[string]string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	name := "bb-" + rand.String(8)
	secret := createSecret(t, "bucket-"+name, nil)
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{generatedSecretNamespaceAnnotation: namespace}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"},
			Region:      "us-east-1",
			SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), bb)).To(Succeed())
	return bb
}

// As Gardener's extensions library (backupbucket.GeneratedSecretObjectMeta): the annotation sets the
// namespace of generated-bucket-<name>, `garden` without it. A changed annotation moves the secret on the
// next reconcile, and the deletion removes it where it is.
func TestGeneratedSecretGoesToTheAnnotatedNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bb := newBucketWithGeneratedSecretIn(t, allowedGeneratedSecretNamespace, nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	name := "generated-bucket-" + bb.Name
	g.Expect(bb.Status.GeneratedSecretRef).To(Equal(&corev1.SecretReference{Name: name, Namespace: allowedGeneratedSecretNamespace}))
	g.Expect(getSecret(g, allowedGeneratedSecretNamespace, name).Data).To(HaveKey("hostPath"))
	g.Expect(secretGone("garden", name)()).To(BeTrue())

	// gardenlet's own value, the garden namespace: the secret moves there.
	patch := client.MergeFrom(bb.DeepCopy())
	bb.Annotations[generatedSecretNamespaceAnnotation] = "garden"
	bb.Annotations[extensionsv1alpha1.OperationAnnotation] = extensionsv1alpha1.OperationReconcile
	g.Expect(env.Client.Patch(ctx, bb, patch)).To(Succeed())
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	g.Expect(bb.Status.GeneratedSecretRef).To(Equal(&corev1.SecretReference{Name: name, Namespace: "garden"}))
	g.Expect(getSecret(g, "garden", name).Data).To(HaveKey("hostPath"))
	g.Expect(secretGone(allowedGeneratedSecretNamespace, name)()).To(BeTrue(), "the secret left its old namespace")

	// Back, and deleted from there.
	patch = client.MergeFrom(bb.DeepCopy())
	bb.Annotations[generatedSecretNamespaceAnnotation] = allowedGeneratedSecretNamespace
	bb.Annotations[extensionsv1alpha1.OperationAnnotation] = extensionsv1alpha1.OperationReconcile
	g.Expect(env.Client.Patch(ctx, bb, patch)).To(Succeed())
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	g.Expect(getSecret(g, allowedGeneratedSecretNamespace, name).Data).To(HaveKey("hostPath"))
	deleteAndWaitGone(t, bb)
	g.Expect(secretGone(allowedGeneratedSecretNamespace, name)()).To(BeTrue())
	g.Expect(secretGone("garden", name)()).To(BeTrue())
}

// The generated secret carries the bucket's credentials (for s3 the bucket secret's keys), so the annotation
// may only name a namespace the operator allowed (the controller's own and --generated-secret-namespaces):
// any other is refused naming the annotation, and nothing is written there. A value that is no namespace
// name is refused by the webhook.
func TestGeneratedSecretNamespaceMustBeAllowed(t *testing.T) {
	g := NewWithT(t)
	field := "metadata.annotations[" + generatedSecretNamespaceAnnotation + "]"

	bb := newBucketWithGeneratedSecretIn(t, "kube-system", nil)
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	g.Eventually(func(g Gomega) {
		get(g, bb)
		g.Expect(bb.Status.LastError).NotTo(BeNil())
		g.Expect(bb.Status.LastError.Description).To(And(ContainSubstring(field), ContainSubstring("kube-system")))
	}, timeout, interval).Should(Succeed())
	g.Expect(bb.Status.GeneratedSecretRef).To(BeNil())
	g.Expect(secretGone("kube-system", "generated-bucket-"+bb.Name)()).To(BeTrue())
	g.Expect(secretGone("garden", "generated-bucket-"+bb.Name)()).To(BeTrue())

	invalid := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: "bb-" + rand.String(8), Annotations: map[string]string{generatedSecretNamespaceAnnotation: "Not_A_Namespace"}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"},
			Region:      "us-east-1",
		},
	}
	invalid.Spec.SecretRef = corev1.SecretReference{Name: "bucket-" + invalid.Name, Namespace: "garden"}
	err := env.Client.Create(context.Background(), invalid)
	g.Expect(err).To(MatchError(ContainSubstring(field)))
}
