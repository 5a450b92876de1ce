package backupvalidation

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/validatingwebhook"
)

// The paths the extension serves the validators on, and the name of their configuration.
const (
	BackupEntryPath   = "/webhooks/validate-backupentry"
	BackupBucketPath  = "/webhooks/validate-backupbucket"
	ConfigurationName = "gardener-extension-backup-validation"
)

// AddToManager registers both validators with the manager's webhook server.
func AddToManager(mgr manager.Manager, handles Handles) error {
	if err := builder.WebhookManagedBy(mgr, &extensionsv1alpha1.BackupEntry{}).
		WithValidator(EntryValidator{Handles: handles}).
		WithValidatorCustomPath(BackupEntryPath).
		Complete(); err != nil {
		return err
	}
	return builder.WebhookManagedBy(mgr, &extensionsv1alpha1.BackupBucket{}).
		WithValidator(BucketValidator{Handles: handles}).
		WithValidatorCustomPath(BackupBucketPath).
		Complete()
}

// WebhookConfiguration routes creates and updates of BackupEntries and BackupBuckets to the extension. It
// fails closed: what it refuses is checked again by the controllers, but the immutability of an entry's
// bucket and type is only enforced here, so the chart runs two replicas behind a PodDisruptionBudget
// rather than letting writes through unchecked while a pod restarts. Deletions are not routed: nothing a
// deletion carries needs checking, and a deletion must never hang on the webhook.
//
// Only objects of providerTypes (the extension's --provider-types), without a type, or updated away from one
// of them are routed (HandledTypeExpression): failing closed must not stop gardenlet from writing the
// BackupEntries and BackupBuckets that another backup extension on the seed owns.
func WebhookConfiguration(service admissionregistrationv1.ServiceReference, caBundle []byte, providerTypes []string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	webhook := func(name, resource, path string) admissionregistrationv1.ValidatingWebhook {
		w := validatingwebhook.CreateUpdate(name, extensionsv1alpha1.SchemeGroupVersion, resource, admissionregistrationv1.ClusterScope, service, path, caBundle)
		w.MatchConditions = handledTypeConditions(providerTypes)
		return w
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			webhook("validate.backupentries.extensions.gardener.cloud", "backupentries", BackupEntryPath),
			webhook("validate.backupbuckets.extensions.gardener.cloud", "backupbuckets", BackupBucketPath),
		},
	}
}
