package secretfinalizer

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

const (
	timeout  = 20 * time.Second
	poll     = 100 * time.Millisecond
	settle   = 2 * time.Second
	finalize = druidv1alpha1.FinalizerName
)

var ctx = context.Background()

func createSecret(t *testing.T, namespace, name string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{"k": []byte("v")}}
	NewWithT(t).Expect(env.Client.Create(ctx, s)).To(Succeed())
	t.Cleanup(func() { dropFinalizerAndDelete(namespace, name) })
}

// dropFinalizerAndDelete lets the namespace of a test go even when an assertion failed half-way.
func dropFinalizerAndDelete(namespace, name string) {
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return
	}
	s.Finalizers = nil
	_ = env.Client.Update(ctx, s)
	_ = env.Client.Delete(ctx, s)
}

// newEtcd is a minimal valid Etcd that references the secrets named in the customizations.
func newEtcd(namespace, name string, customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": name}, Replicas: 1},
	}
	for _, c := range customize {
		c(etcd)
	}
	return etcd
}

func createEtcd(t *testing.T, etcd *druidv1alpha1.Etcd) *druidv1alpha1.Etcd {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	t.Cleanup(func() {
		stored := &druidv1alpha1.Etcd{}
		if env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), stored) == nil {
			stored.Finalizers = nil
			_ = env.Client.Update(ctx, stored)
			_ = env.Client.Delete(ctx, stored)
		}
	})
	return etcd
}

func withClientTLS(ca, server, clientSecret string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: ca}},
			ServerTLSSecretRef: corev1.SecretReference{Name: server},
			ClientTLSSecretRef: corev1.SecretReference{Name: clientSecret},
		}
	}
}

func withBackupSecret(name string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{
			Container: ptr.To("bucket"), Prefix: "etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			SecretRef: &corev1.SecretReference{Name: name},
		}
	}
}

func withAuthSecret(namespace, name string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.AuthSecretRef = &corev1.SecretReference{Namespace: namespace, Name: name}
	}
}

func withFinalizers(finalizers ...string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) { e.Finalizers = finalizers }
}

// finalizersOf reads a secret's finalizers from the apiserver; a missing secret reads as nil with ok false.
func finalizersOf(namespace, name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		s := &corev1.Secret{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
		if apierrors.IsNotFound(err) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		return s.Finalizers
	}
}

func expectProtected(t *testing.T, namespace string, names ...string) {
	t.Helper()
	for _, name := range names {
		NewWithT(t).Eventually(finalizersOf(namespace, name)).WithTimeout(timeout).WithPolling(poll).
			Should(ContainElement(finalize), "secret %s/%s", namespace, name)
	}
}

func expectReleased(t *testing.T, namespace string, names ...string) {
	t.Helper()
	for _, name := range names {
		NewWithT(t).Eventually(finalizersOf(namespace, name)).WithTimeout(timeout).WithPolling(poll).
			ShouldNot(ContainElement(finalize), "secret %s/%s", namespace, name)
	}
}

// expectStaysProtected checks all names together for the settle period.
func expectStaysProtected(t *testing.T, namespace string, names ...string) {
	t.Helper()
	NewWithT(t).Consistently(func(g Gomega) {
		for _, name := range names {
			g.Expect(finalizersOf(namespace, name)(g)).To(ContainElement(finalize), "secret %s/%s", namespace, name)
		}
	}).WithTimeout(settle).WithPolling(poll).Should(Succeed())
}

func updateEtcd(t *testing.T, etcd *druidv1alpha1.Etcd, change func(*druidv1alpha1.Etcd)) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		stored := &druidv1alpha1.Etcd{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), stored); err != nil {
			return err
		}
		change(stored)
		return env.Client.Update(ctx, stored)
	}).WithTimeout(timeout).Should(Succeed())
}

// eventsFor lists the reasons of the events.k8s.io events regarding the named object.
func eventsFor(namespace, name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}
