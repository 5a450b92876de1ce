package backupextension_test

import (
	"context"
	"strings"
	"testing"

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

// gardenerEntry is a BackupEntry as gardenlet writes it (Gardener's wire shape, see example/backupentry.yaml):
// named <shoot namespace>--<shoot uid>, the seed's bucket (named by the seed UID), the entry secret gardenlet
// relays. The sweep mutates one thing of it per row.
func gardenerEntry(name string) *extensionsv1alpha1.BackupEntry {
	return &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationReconcile}},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec:                extensionsv1alpha1.DefaultSpec{Type: "s3"},
			Region:                     "eu-central-1",
			BucketName:                 string(uuid.NewUUID()),
			SecretRef:                  corev1.SecretReference{Name: "entry-" + name, Namespace: "garden"},
			BackupBucketProviderStatus: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"s3.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketStatus"}`)},
		},
	}
}

// gardenerBucket is a BackupBucket as gardenlet writes it: named by the seed UID, its secret garden/bucket-<name>.
func gardenerBucket() *extensionsv1alpha1.BackupBucket {
	name := string(uuid.NewUUID())
	return &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "s3", ProviderConfig: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"s3.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`)}},
			Region:      "eu-central-1",
			SecretRef:   corev1.SecretReference{Name: "bucket-" + name, Namespace: "garden"},
		},
	}
}

// shootEntryName is a fresh Gardener-shaped entry name of a shoot namespace that does not exist (nothing is
// written for the sweep's objects; the controller only reports the missing namespace).
func shootEntryName() string { return entryName("shoot--sweep--" + rand.String(6)) }

// sweepRow is one hostile object: created (or, with update, created valid and then changed), it must be
// refused with a 422 naming field.
type sweepRow struct {
	name   string
	field  string
	create func() client.Object
	// update changes the created object; nil for a create row.
	update func(client.Object)
	// deleting marks the created object for deletion (held by a finalizer) before the update.
	deleting bool
}

func entryRow(name, field string, mutate func(*extensionsv1alpha1.BackupEntry)) sweepRow {
	return sweepRow{name: name, field: field, create: func() client.Object {
		be := gardenerEntry(shootEntryName())
		mutate(be)
		return be
	}}
}

func entryUpdateRow(name, field string, deleting bool, mutate func(*extensionsv1alpha1.BackupEntry)) sweepRow {
	return sweepRow{name: name, field: field, deleting: deleting,
		create: func() client.Object { return gardenerEntry(shootEntryName()) },
		update: func(obj client.Object) { mutate(obj.(*extensionsv1alpha1.BackupEntry)) }}
}

func bucketRow(name, field string, mutate func(*extensionsv1alpha1.BackupBucket)) sweepRow {
	return sweepRow{name: name, field: field, create: func() client.Object {
		bb := gardenerBucket()
		mutate(bb)
		return bb
	}}
}

func bucketUpdateRow(name, field string, deleting bool, mutate func(*extensionsv1alpha1.BackupBucket)) sweepRow {
	return sweepRow{name: name, field: field, deleting: deleting,
		create: func() client.Object { return gardenerBucket() },
		update: func(obj client.Object) { mutate(obj.(*extensionsv1alpha1.BackupBucket)) }}
}

// rename gives an entry another name and the entry secret that goes with it, so that only the name is wrong.
func rename(be *extensionsv1alpha1.BackupEntry, name string) {
	be.Name = name
	be.Spec.SecretRef.Name = "entry-" + name
}

var hostileRows = []sweepRow{
	// Names: the entry name picks the namespace the etcd backup secret is written into.
	entryRow("entry named after kube-system", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, entryName("kube-system")) }),
	entryRow("entry named after garden", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, entryName("garden")) }),
	entryRow("source entry named after kube-system", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, "source-"+entryName("kube-system")) }),
	entryRow("entry named after a shootless namespace prefix", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, entryName("shootdev-app")) }),
	entryRow("entry without the uid separator", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, "shoot-dev-app-"+rand.String(8)) }),
	entryRow("entry whose namespace part is not a namespace name", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, entryName("shoot--dev.app")) }),
	entryRow("entry whose namespace part ends in a dash", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) { rename(be, entryName("shoot-")) }),
	entryRow("entry whose namespace part is too long for a namespace", "metadata.name", func(be *extensionsv1alpha1.BackupEntry) {
		rename(be, entryName("shoot--dev--"+strings.Repeat("a", 60)))
	}),
	// Required fields.
	entryRow("entry without type", "spec.type", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.Type = "" }),
	entryRow("entry without region", "spec.region", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.Region = "" }),
	entryRow("entry without bucketName", "spec.bucketName", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "" }),
	entryRow("entry whose bucketName climbs out of the bucket root", "spec.bucketName", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "../../etc" }),
	entryRow("entry whose bucketName is no object name", "spec.bucketName", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "Bucket_Of_Another" }),
	entryRow("entry without secretRef name", "spec.secretRef.name", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Name = "" }),
	entryRow("entry without secretRef namespace", "spec.secretRef.namespace", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Namespace = "" }),
	// Foreign secrets.
	entryRow("entry naming its secret name in kube-system", "spec.secretRef", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Namespace = "kube-system" }),
	entryRow("entry naming another entry's secret", "spec.secretRef", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Name = "entry-" + shootEntryName() }),
	entryRow("entry naming a bucket secret", "spec.secretRef", func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Name = "bucket-" + be.Spec.BucketName }),
	// Updates.
	entryUpdateRow("entry moved to another bucket", "spec.bucketName", false, func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = string(uuid.NewUUID()) }),
	entryUpdateRow("entry moved to another provider type", "spec.type", false, func(be *extensionsv1alpha1.BackupEntry) { be.Spec.Type = "local" }),
	entryUpdateRow("entry moved to another region", "spec.region", false, func(be *extensionsv1alpha1.BackupEntry) { be.Spec.Region = "us-east-1" }),
	entryUpdateRow("entry repointed at a foreign secret", "spec.secretRef", false, func(be *extensionsv1alpha1.BackupEntry) { be.Spec.SecretRef.Namespace = "kube-system" }),
	entryUpdateRow("entry changed while being deleted", "spec", true, func(be *extensionsv1alpha1.BackupEntry) {
		be.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"prefix":"elsewhere"}`)}
	}),
	// Buckets.
	bucketRow("bucket named longer than a store takes", "metadata.name", func(bb *extensionsv1alpha1.BackupBucket) {
		bb.Name = strings.Repeat("b", 64)
		bb.Spec.SecretRef.Name = "bucket-" + bb.Name
	}),
	bucketRow("bucket without type", "spec.type", func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.Type = "" }),
	bucketRow("bucket without region", "spec.region", func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.Region = "" }),
	bucketRow("bucket without secretRef name", "spec.secretRef.name", func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.SecretRef.Name = "" }),
	bucketRow("bucket without secretRef namespace", "spec.secretRef.namespace", func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.SecretRef.Namespace = "" }),
	bucketRow("bucket naming its secret name in a shoot namespace", "spec.secretRef", func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.SecretRef.Namespace = "shoot--dev--app" }),
	bucketRow("bucket naming another bucket's generated secret", "spec.secretRef", func(bb *extensionsv1alpha1.BackupBucket) {
		bb.Spec.SecretRef.Name = "generated-bucket-" + string(uuid.NewUUID())
	}),
	bucketRow("bucket naming a kube-system secret", "spec.secretRef", func(bb *extensionsv1alpha1.BackupBucket) {
		bb.Spec.SecretRef = corev1.SecretReference{Name: "bootstrap-token-abcdef", Namespace: "kube-system"}
	}),
	bucketUpdateRow("bucket moved to another provider type", "spec.type", false, func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.Type = "local" }),
	bucketUpdateRow("bucket repointed at a foreign secret", "spec.secretRef", false, func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.SecretRef.Namespace = "kube-system" }),
	bucketUpdateRow("bucket changed while being deleted", "spec", true, func(bb *extensionsv1alpha1.BackupBucket) { bb.Spec.Region = "us-east-1" }),
}

// TestHostileObjectsAreRefusedNamingTheField sends every hostile row through the real apiserver and the
// extension's webhook: each is refused with 422 Invalid and the field named, and nothing of it is stored
// (create) or changed (update).
func TestHostileObjectsAreRefusedNamingTheField(t *testing.T) {
	NewWithT(t).Expect(len(hostileRows)).To(BeNumerically(">=", 25))
	for _, row := range hostileRows {
		t.Run(row.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			obj := row.create()
			if row.update == nil {
				err := env.Client.Create(ctx, obj)
				if err == nil {
					forceRemove(t, obj)
				}
				expectInvalid(g, err, row.field)
				return
			}
			// Objects of the sweep hold a finalizer of their own, so that neither the controller (which would
			// release its finalizer after a failed deletion never) nor the deletion removes them under the test.
			obj.SetFinalizers([]string{"test.gardener-etcd.io/sweep"})
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "the valid start of the row is admitted")
			t.Cleanup(func() { forceRemove(t, obj) })
			if row.deleting {
				g.Expect(env.Client.Delete(ctx, obj)).To(Succeed())
			}
			var err error
			g.Eventually(func(g Gomega) {
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				row.update(obj)
				err = env.Client.Update(ctx, obj)
				g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "retry a conflict with the controller")
			}, timeout, interval).Should(Succeed())
			expectInvalid(g, err, row.field)
		})
	}
}

func expectInvalid(g Gomega, err error, field string) {
	g.Expect(err).To(HaveOccurred(), "the apiserver must refuse it")
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a validation error (422), got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(field+":"), "the message names %s: %v", field, err)
}

// TestGardenerShapedObjectsAreAdmitted: what gardenlet writes stays admitted, and so do writes the rules
// leave alone on purpose.
func TestGardenerShapedObjectsAreAdmitted(t *testing.T) {
	for name, create := range map[string]func() client.Object{
		"entry of a shoot":        func() client.Object { return gardenerEntry(shootEntryName()) },
		"source entry of a shoot": func() client.Object { return gardenerEntry("source-" + shootEntryName()) },
		"entry of a legacy shoot": func() client.Object { return gardenerEntry(entryName("shoot-legacy-" + rand.String(6))) },
		"bucket of a seed":        func() client.Object { return gardenerBucket() },
		"bucket without providerConfig": func() client.Object {
			bb := gardenerBucket()
			bb.Spec.ProviderConfig = nil
			return bb
		},
		// Another backup extension's object is that extension's to judge.
		"entry of another extension's type": func() client.Object {
			be := gardenerEntry(entryName("kube-system"))
			be.Spec.Type = "aws"
			return be
		},
	} {
		t.Run(name, func(t *testing.T) {
			obj := create()
			NewWithT(t).Expect(env.Client.Create(context.Background(), obj)).To(Succeed())
			t.Cleanup(func() { forceRemove(t, obj) })
		})
	}
}

// TestUpdatesTheRulesLeaveAloneAreAdmitted: gardenlet's operation annotations and the finalizer handling go
// through on an object stored before the webhook (bypassWebhookLabel stands for that) whose name and
// secretRef the create rules refuse; a bucket's region may change (Gardener allows it; the provider decides).
func TestUpdatesTheRulesLeaveAloneAreAdmitted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	be := gardenerEntry(entryName("kube-system"))
	be.Spec.SecretRef.Namespace = "kube-system"
	be.Labels = map[string]string{bypassWebhookLabel: ""}
	be.Finalizers = []string{"test.gardener-etcd.io/sweep"}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, be) })
	g.Eventually(func(g Gomega) {
		get(g, be)
		be.Labels = nil // from now on the webhook judges it
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, extensionsv1alpha1.OperationAnnotation, extensionsv1alpha1.OperationMigrate)
		g.Expect(env.Client.Update(ctx, be)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, be)
		be.Finalizers = nil
		g.Expect(env.Client.Update(ctx, be)).To(Succeed())
	}, timeout, interval).Should(Succeed())

	bb := gardenerBucket()
	bb.Finalizers = []string{"test.gardener-etcd.io/sweep"}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, bb) })
	g.Eventually(func(g Gomega) {
		get(g, bb)
		bb.Spec.Region = "us-east-1"
		g.Expect(env.Client.Update(ctx, bb)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}
