package backupextension_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

// A control-plane migration as gardenlet drives it: `migrate` on the source seed, after which gardenlet
// deletes the extension objects there, and `restore` on the destination seed (or on the source seed again
// when the migration is rolled back). Whatever migrate does, the backups in the bucket must survive.

// annotate asks for an operation the way gardenlet does, with the operation annotation.
func annotate(t *testing.T, obj client.Object, operation string) {
	t.Helper()
	g := NewWithT(t)
	get(g, obj)
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[extensionsv1alpha1.OperationAnnotation] = operation
	obj.SetAnnotations(annotations)
	g.Expect(env.Client.Patch(context.Background(), obj, patch)).To(Succeed())
}

// eventuallyOperationSucceeded waits until the last operation of obj is a successful opType for the current
// generation and the operation annotation is gone.
func eventuallyOperationSucceeded(t *testing.T, obj client.Object, status func() *extensionsv1alpha1.DefaultStatus, opType extensionsv1alpha1.LastOperationType) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, obj)
		s := status()
		g.Expect(s.LastOperation).NotTo(BeNil())
		g.Expect(s.LastOperation.Type).To(Equal(opType))
		g.Expect(s.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
		g.Expect(s.LastError).To(BeNil())
		g.Expect(s.ObservedGeneration).To(Equal(obj.GetGeneration()))
		g.Expect(obj.GetAnnotations()).NotTo(HaveKey(extensionsv1alpha1.OperationAnnotation))
	}, timeout, interval).Should(Succeed())
}

// writeSnapshot puts a snapshot of the entry into the local bucket, as the entry's etcd would.
func writeSnapshot(t *testing.T, bb *extensionsv1alpha1.BackupBucket, entry string) string {
	t.Helper()
	f := filepath.Join(localRoot, bb.Name, entry, "etcd-main", "v2", "Full-00000000-00000001-1")
	g := NewWithT(t)
	g.Expect(os.MkdirAll(filepath.Dir(f), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(f, []byte("snapshot"), 0o644)).To(Succeed())
	return f
}

// reconciledLocalEntry returns a reconciled local bucket and a reconciled entry of a new shoot namespace,
// with a snapshot in the bucket; the bucket is deleted at the end of the test.
func reconciledLocalEntry(t *testing.T) (bb *extensionsv1alpha1.BackupBucket, be *extensionsv1alpha1.BackupEntry, namespace, snapshot string) {
	t.Helper()
	bb = newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace = newShootNamespace(t)
	be = newEntry(t, bb, entryName(namespace), map[string][]byte{"token": []byte("one")})
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	return bb, be, namespace, writeSnapshot(t, bb, be.Name)
}

// migrate migrates the entry and waits until the migration is acknowledged.
func migrate(t *testing.T, be *extensionsv1alpha1.BackupEntry) {
	t.Helper()
	annotate(t, be, extensionsv1alpha1.OperationMigrate)
	eventuallyOperationSucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus }, extensionsv1alpha1.LastOperationTypeMigrate)
}

// eventReasons lists the reasons of the events of the given type regarding the named (cluster-scoped) object.
func eventReasons(name, eventType string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Type == eventType {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}

func TestMigratedEntryIsReleasedAndItsDeletionKeepsTheBackups(t *testing.T) {
	g := NewWithT(t)
	_, be, namespace, snapshot := reconciledLocalEntry(t)

	migrate(t, be)
	g.Expect(be.Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	g.Expect(getSecret(g, namespace, "etcd-backup").Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name),
		"the source etcd keeps backing up until it is destroyed")
	g.Expect(snapshot).To(BeARegularFile())
	g.Eventually(eventReasons(be.Name, corev1.EventTypeNormal), timeout, interval).Should(ContainElement("MigrateSucceeded"))

	// gardenlet deletes the migrated entry on the source seed: nothing of it may go.
	deleteAndWaitGone(t, be)
	g.Expect(snapshot).To(BeARegularFile())
	g.Expect(getSecret(g, namespace, "etcd-backup").Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name))
}

func TestMigratedEntryIgnoresAReconcile(t *testing.T) {
	g := NewWithT(t)
	_, be, namespace, _ := reconciledLocalEntry(t)
	t.Cleanup(func() { deleteAndWaitGone(t, be) })
	migrate(t, be)
	migrated := be.Status.LastOperation.DeepCopy()

	// New credentials and a reconcile request: a reconcile would rewrite the secret and add the finalizer.
	entrySecret := getSecret(g, "garden", be.Spec.SecretRef.Name)
	entrySecret.Data["token"] = []byte("two")
	g.Expect(env.Client.Update(context.Background(), entrySecret)).To(Succeed())
	annotate(t, be, extensionsv1alpha1.OperationReconcile)
	g.Consistently(func(g Gomega) {
		get(g, be)
		g.Expect(be.Status.LastOperation).To(Equal(migrated))
		g.Expect(be.Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
		g.Expect(be.Annotations).To(HaveKeyWithValue(extensionsv1alpha1.OperationAnnotation, extensionsv1alpha1.OperationReconcile))
		g.Expect(getSecret(g, namespace, "etcd-backup").Data).To(HaveKeyWithValue("token", []byte("one")))
	}, "2s", "200ms").Should(Succeed())
}

func TestRestoreOfAMigratedEntryTakesItBack(t *testing.T) {
	g := NewWithT(t)
	_, be, namespace, snapshot := reconciledLocalEntry(t)
	t.Cleanup(func() { deleteAndWaitGone(t, be) })
	migrate(t, be)

	// The secret is gone (say the operator cleaned up), and the migration is rolled back.
	g.Expect(env.Client.Delete(context.Background(), getSecret(g, namespace, "etcd-backup"))).To(Succeed())
	annotate(t, be, extensionsv1alpha1.OperationRestore)
	eventuallyOperationSucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus }, extensionsv1alpha1.LastOperationTypeRestore)
	g.Expect(be.Finalizers).To(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	secret := getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(HaveKeyWithValue("hostPath", []byte(localRoot)))
	g.Expect(secret.Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name))
	g.Expect(snapshot).To(BeARegularFile())
	g.Eventually(eventReasons(be.Name, corev1.EventTypeNormal), timeout, interval).Should(ContainElement("RestoreSucceeded"))
}

func TestRestoreOfANewEntryOnTheDestinationSeed(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })
	namespace := newShootNamespace(t)
	name := entryName(namespace)
	// The backups the source seed wrote into the shared bucket.
	snapshot := writeSnapshot(t, bb, name)

	secret := createSecret(t, "entry-"+name, map[string][]byte{"token": []byte("one")})
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationRestore},
		},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: bb.Spec.Type},
			Region:      bb.Spec.Region,
			BucketName:  bb.Name,
			SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
		},
	}
	g.Expect(env.Client.Create(context.Background(), be)).To(Succeed())
	t.Cleanup(func() { deleteAndWaitGone(t, be) })

	eventuallyOperationSucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus }, extensionsv1alpha1.LastOperationTypeRestore)
	g.Expect(be.Finalizers).To(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	g.Expect(getSecret(g, namespace, "etcd-backup").Data).To(Equal(map[string][]byte{
		"token":      []byte("one"),
		"bucketName": []byte(bb.Name),
		"hostPath":   []byte(localRoot),
	}))
	g.Expect(snapshot).To(BeARegularFile())
}

func TestMigratedBucketIsReleasedAndItsDeletionKeepsTheBucket(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	bucketDir := filepath.Join(localRoot, bb.Name)
	t.Cleanup(func() { _ = os.RemoveAll(bucketDir) })
	snapshot := writeSnapshot(t, bb, "shoot--dev--other--uid")

	annotate(t, bb, extensionsv1alpha1.OperationMigrate)
	eventuallyOperationSucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus }, extensionsv1alpha1.LastOperationTypeMigrate)
	g.Expect(bb.Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupBucketFinalizer))

	deleteAndWaitGone(t, bb)
	g.Expect(bucketDir).To(BeADirectory())
	g.Expect(snapshot).To(BeARegularFile())
}

// On the destination seed, gardenlet migrates and deletes the `source-` entry once the copy is done: the
// source's backups stay, and the credentials of the source seed's bucket leave the shoot namespace.
func TestMigratedSourceEntryRemovesItsSecretAndKeepsTheBackups(t *testing.T) {
	g := NewWithT(t)
	bb, be, namespace, _ := reconciledLocalEntry(t)
	t.Cleanup(func() { deleteAndWaitGone(t, be) })
	source := newEntry(t, bb, backupentry.SourcePrefix+be.Name, map[string][]byte{"token": []byte("source")})
	eventuallySucceeded(t, source, func() *extensionsv1alpha1.DefaultStatus { return &source.Status.DefaultStatus })
	g.Expect(getSecret(g, namespace, backupentry.SourceEtcdBackupSecretName).Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, source.Name))
	snapshot := writeSnapshot(t, bb, source.Name)

	migrate(t, source)
	g.Eventually(func() bool { return secretExists(namespace, backupentry.SourceEtcdBackupSecretName) }, timeout, interval).Should(BeFalse(),
		"source-etcd-backup is gone with the migrated source entry")
	g.Expect(getSecret(g, namespace, backupentry.EtcdBackupSecretName).Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name),
		"the shoot's own secret is untouched")
	deleteAndWaitGone(t, source)
	g.Expect(snapshot).To(BeARegularFile())
}

// A migrated entry that is being deleted but held by someone else's finalizer is seen by the controller while
// it terminates: it must still delete nothing.
func TestMigratedEntryBeingDeletedIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, be, namespace, snapshot := reconciledLocalEntry(t)
	migrate(t, be)
	const holder = "test.gardener-etcd/hold"
	patch := client.MergeFrom(be.DeepCopy())
	be.Finalizers = append(be.Finalizers, holder)
	g.Expect(env.Client.Patch(ctx, be, patch)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, be)).To(Succeed())

	g.Consistently(func(g Gomega) {
		get(g, be)
		g.Expect(be.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeMigrate), "no Delete operation ran")
		g.Expect(snapshot).To(BeARegularFile())
		g.Expect(secretExists(namespace, backupentry.EtcdBackupSecretName)).To(BeTrue())
	}, "2s", interval).Should(Succeed())

	get(g, be)
	patch = client.MergeFrom(be.DeepCopy())
	be.Finalizers = nil
	g.Expect(env.Client.Patch(ctx, be, patch)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(be), be))
	}, timeout, interval).Should(BeTrue(), "the released entry is gone")
	g.Expect(snapshot).To(BeARegularFile())
}
