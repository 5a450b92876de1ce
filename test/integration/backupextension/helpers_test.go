package backupextension_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

// createSecret creates a secret in garden and deletes it at the end of the test.
func createSecret(t *testing.T, name string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden"}, Data: data}
	NewWithT(t).Expect(env.Client.Create(context.Background(), secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secret) })
	return secret
}

// newBucket creates a BackupBucket with its bucket secret and returns it.
func newBucket(t *testing.T, providerType string, credentials map[string][]byte, providerConfig ...string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	return newNamedBucket(t, "bb-"+rand.String(8), providerType, credentials, providerConfig...)
}

// newNamedBucket is newBucket with a name of the caller's, for a test that prepares objects named after the
// bucket before it exists.
func newNamedBucket(t *testing.T, name, providerType string, credentials map[string][]byte, providerConfig ...string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	secret := createSecret(t, "bucket-"+name, credentials)
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "us-east-1",
			SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
		},
	}
	for _, cfg := range providerConfig {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(cfg)}
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), bb)).To(Succeed())
	return bb
}

// newShootNamespace creates a namespace named like a shoot control plane.
func newShootNamespace(t *testing.T) string {
	t.Helper()
	name := "shoot--dev--" + rand.String(8)
	NewWithT(t).Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// newEntry creates a BackupEntry of the bucket for the shoot namespace, with its entry secret.
func newEntry(t *testing.T, bb *extensionsv1alpha1.BackupBucket, name string, credentials map[string][]byte) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	secret := createSecret(t, "entry-"+name, credentials)
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec:                extensionsv1alpha1.DefaultSpec{Type: bb.Spec.Type},
			Region:                     bb.Spec.Region,
			BucketName:                 bb.Name,
			SecretRef:                  corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
			BackupBucketProviderStatus: bb.Status.ProviderStatus,
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), be)).To(Succeed())
	return be
}

func entryName(namespace string) string { return namespace + "--" + string(uuid.NewUUID()) }

// get reads the current state of obj.
func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// eventuallySucceeded waits until the last operation of the object succeeded for its current generation and
// the operation annotation is gone, which is what gardenlet waits for.
func eventuallySucceeded(t *testing.T, obj client.Object, status func() *extensionsv1alpha1.DefaultStatus) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, obj)
		s := status()
		g.Expect(s.LastOperation).NotTo(BeNil())
		g.Expect(s.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
		g.Expect(s.LastError).To(BeNil())
		g.Expect(s.ObservedGeneration).To(Equal(obj.GetGeneration()))
		g.Expect(obj.GetAnnotations()).NotTo(HaveKey(extensionsv1alpha1.OperationAnnotation))
	}, timeout, interval).Should(Succeed())
}

// deleteAndWaitGone deletes obj and waits until the controller released its finalizer.
func deleteAndWaitGone(t *testing.T, obj client.Object) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Delete(context.Background(), obj)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	}, timeout, interval).Should(BeTrue(), "%s still exists", obj.GetName())
}

func getSecret(g Gomega, namespace, name string) *corev1.Secret {
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, secret)).To(Succeed())
	return secret
}

func secretGone(namespace, name string) func() bool {
	return func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Secret{}))
	}
}

// forceRemove deletes an object whose controller cannot complete the deletion (for example with broken
// credentials) by dropping its finalizers, so a failing-path test leaves nothing behind.
func forceRemove(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	_ = env.Client.Delete(ctx, obj)
	NewWithT(t).Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		obj.SetFinalizers(nil)
		return env.Client.Update(ctx, obj)
	}, timeout, interval).Should(Succeed())
}

// secretExists tells whether the secret exists (a read error counts as existing, so a test waiting for it to
// go does not pass on an error).
func secretExists(namespace, name string) bool {
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Secret{})
	return !apierrors.IsNotFound(err)
}
