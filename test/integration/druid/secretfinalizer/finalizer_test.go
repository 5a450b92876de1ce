package secretfinalizer

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestEveryReferencedSecretGetsTheFinalizer(t *testing.T) {
	ns, other := env.CreateNamespace(t), env.CreateNamespace(t)
	for _, name := range []string{"ca-etcd", "etcd-server", "etcd-client", "etcd-backup", "unrelated"} {
		createSecret(t, ns, name)
	}
	createSecret(t, other, "etcd-auth")

	createEtcd(t, newEtcd(ns, "etcd-main", withClientTLS("ca-etcd", "etcd-server", "etcd-client"),
		withBackupSecret("etcd-backup"), withAuthSecret(other, "etcd-auth")))

	expectProtected(t, ns, "ca-etcd", "etcd-server", "etcd-client", "etcd-backup")
	expectProtected(t, other, "etcd-auth")
	NewWithT(t).Consistently(finalizersOf(ns, "unrelated")).WithTimeout(settle).WithPolling(poll).Should(BeEmpty())
}

func TestSecretCreatedAfterTheEtcdIsProtected(t *testing.T) {
	ns := env.CreateNamespace(t)
	createEtcd(t, newEtcd(ns, "etcd-main", withBackupSecret("etcd-backup")))
	createSecret(t, ns, "etcd-backup")
	expectProtected(t, ns, "etcd-backup")
}

func TestFinalizerRemovedByHandComesBack(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup")
	createEtcd(t, newEtcd(ns, "etcd-main", withBackupSecret("etcd-backup")))
	expectProtected(t, ns, "etcd-backup")

	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-backup"}, s)).To(Succeed())
	s.Finalizers = nil
	g.Expect(env.Client.Update(ctx, s)).To(Succeed())
	expectProtected(t, ns, "etcd-backup")
}

func TestSharedSecretKeptUntilTheLastEtcdIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	for _, name := range []string{"ca-etcd", "etcd-main-server", "etcd-events-server", "etcd-client"} {
		createSecret(t, ns, name)
	}
	main := createEtcd(t, newEtcd(ns, "etcd-main", withClientTLS("ca-etcd", "etcd-main-server", "etcd-client")))
	events := createEtcd(t, newEtcd(ns, "etcd-events", withClientTLS("ca-etcd", "etcd-events-server", "etcd-client")))
	expectProtected(t, ns, "ca-etcd", "etcd-main-server", "etcd-events-server", "etcd-client")

	g.Expect(env.Client.Delete(ctx, main)).To(Succeed())
	expectReleased(t, ns, "etcd-main-server")
	expectStaysProtected(t, ns, "ca-etcd", "etcd-client", "etcd-events-server")

	g.Expect(env.Client.Delete(ctx, events)).To(Succeed())
	expectReleased(t, ns, "ca-etcd", "etcd-client", "etcd-events-server")
}

func TestChangedReferenceReleasesTheOldSecret(t *testing.T) {
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "backup-old")
	createSecret(t, ns, "backup-new")
	etcd := createEtcd(t, newEtcd(ns, "etcd-main", withBackupSecret("backup-old")))
	expectProtected(t, ns, "backup-old")

	updateEtcd(t, etcd, withBackupSecret("backup-new"))
	expectProtected(t, ns, "backup-new")
	expectReleased(t, ns, "backup-old")
}

func TestDeletingEtcdHoldsItsSecretsUntilDruidsFinalizerIsGone(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup")
	// A foreign finalizer keeps the Etcd object after druid is done with it.
	etcd := createEtcd(t, newEtcd(ns, "etcd-main", withBackupSecret("etcd-backup"), withFinalizers(finalize, "example.org/keep")))
	expectProtected(t, ns, "etcd-backup")

	g.Expect(env.Client.Delete(ctx, etcd)).To(Succeed())
	expectStaysProtected(t, ns, "etcd-backup")

	// The deletion flow ends by removing druid's finalizer from the Etcd.
	updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Finalizers = []string{"example.org/keep"} })
	expectReleased(t, ns, "etcd-backup")
}

func TestDeletedSecretStaysUntilUnreferenced(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup")
	etcd := createEtcd(t, newEtcd(ns, "etcd-main", withBackupSecret("etcd-backup")))
	expectProtected(t, ns, "etcd-backup")

	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-backup"}, s)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, s)).To(Succeed())

	g.Eventually(eventsFor(ns, "etcd-backup")).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("DeletionBlockedByEtcd"))
	g.Consistently(func(g Gomega) {
		stored := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-backup"}, stored)).To(Succeed())
		g.Expect(stored.DeletionTimestamp).NotTo(BeNil())
	}).WithTimeout(settle).WithPolling(poll).Should(Succeed())

	updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store = nil })
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-backup"}, &corev1.Secret{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(apierrors.IsNotFound))
}
