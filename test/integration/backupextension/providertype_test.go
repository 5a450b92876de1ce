package backupextension_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/backupvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
)

// unreachableLabel routes an object to the configuration unreachableWebhook installs, and only such objects,
// so that the other tests' writes never meet it.
const unreachableLabel = "test.gardener-etcd.io/unreachable-webhook"

// absentService is the Service the unreachable configuration points at; it does not exist, as after an
// uninstall that removed the Service before the webhook configuration, or while no pod of a failed rollout
// is ready.
const absentService = "gardener-extension-backup-absent"

// unreachableWebhook installs the extension's validating webhook configuration, as the chart renders it for
// the built-in provider types, pointing at a Service that does not exist, and waits until the apiserver
// applies it: a BackupEntry of a handled type is refused because the webhook cannot be called.
func unreachableWebhook(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	cfg := backupvalidation.WebhookConfiguration(admissionregistrationv1.ServiceReference{Name: absentService, Namespace: "garden"}, nil, builtin.Types())
	cfg.Name = "test-unreachable-backup-validation"
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: unreachableLabel, Operator: metav1.LabelSelectorOpExists},
		}}
	}
	NewWithT(t).Expect(env.Client.Create(ctx, cfg)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cfg) })
	NewWithT(t).Eventually(func(g Gomega) {
		be := unreachableEntry("local")
		err := env.Client.Create(ctx, be)
		if err == nil {
			forceRemove(t, be)
		}
		g.Expect(err).To(MatchError(ContainSubstring(absentService)))
	}, timeout, interval).Should(Succeed())
}

// unreachableEntry is a BackupEntry of providerType that only the unreachable configuration judges (the
// suite's own configuration is bypassed).
func unreachableEntry(providerType string) *extensionsv1alpha1.BackupEntry {
	name := entryName("shoot--dev--" + rand.String(8))
	return &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{bypassWebhookLabel: "", unreachableLabel: ""}},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "eu-west-1",
			BucketName:  "bb-" + rand.String(8),
			SecretRef:   corev1.SecretReference{Name: "entry-" + name, Namespace: "garden"},
		},
	}
}

// unreachableBucket is the BackupBucket counterpart of unreachableEntry.
func unreachableBucket(providerType string) *extensionsv1alpha1.BackupBucket {
	name := "bb-" + rand.String(8)
	return &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{bypassWebhookLabel: "", unreachableLabel: ""}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "eu-west-1",
			SecretRef:   corev1.SecretReference{Name: "bucket-" + name, Namespace: "garden"},
		},
	}
}

// While the extension cannot be reached, BackupEntries and BackupBuckets of provider types it does not handle
// (aws, owned by another extension on the same seed) are still created and annotated, so gardenlet keeps
// reconciling those shoots; the extension's own types, an empty type, and updates moving an object to or from
// one of its types stay refused (fail closed).
func TestUnreachableWebhookAdmitsForeignProviderTypes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	unreachableWebhook(t)

	refused := func(obj client.Object) {
		t.Helper()
		err := env.Client.Create(ctx, obj)
		if err == nil {
			forceRemove(t, obj)
		}
		g.Expect(err).To(MatchError(ContainSubstring(absentService)), "%s must be refused while the webhook is unreachable", obj.GetName())
	}
	refused(unreachableEntry("local"))
	refused(unreachableEntry("s3"))
	refused(unreachableEntry(""))
	refused(unreachableBucket("local"))
	refused(unreachableBucket(""))

	// Foreign types: created and annotated as gardenlet does.
	foreignEntry := unreachableEntry("aws")
	g.Expect(env.Client.Create(ctx, foreignEntry)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, foreignEntry) })
	foreignBucket := unreachableBucket("aws")
	g.Expect(env.Client.Create(ctx, foreignBucket)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, foreignBucket) })
	for _, obj := range []client.Object{foreignEntry, foreignBucket} {
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		obj.SetAnnotations(map[string]string{extensionsv1alpha1.OperationAnnotation: "reconcile"})
		g.Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed(), "annotating %s", obj.GetName())
	}

	// An update moving a foreign entry to a handled type is judged, so refused.
	patch := client.MergeFrom(foreignEntry.DeepCopy())
	foreignEntry.Spec.Type = "local"
	g.Expect(env.Client.Patch(ctx, foreignEntry, patch)).To(MatchError(ContainSubstring(absentService)))

	// So is an update moving a handled entry away: stored while the webhook was bypassed (no label), it
	// reaches the unreachable configuration with the update that labels it and changes its type.
	handled := unreachableEntry("local")
	delete(handled.Labels, unreachableLabel)
	g.Expect(env.Client.Create(ctx, handled)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, handled) })
	patch = client.MergeFrom(handled.DeepCopy())
	handled.Labels[unreachableLabel] = ""
	handled.Spec.Type = "aws"
	g.Expect(env.Client.Patch(ctx, handled, patch)).To(MatchError(ContainSubstring(absentService)))
}
