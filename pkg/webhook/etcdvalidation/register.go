package etcdvalidation

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/validatingwebhook"
)

// The paths druid serves the validation webhooks on; the webhook configuration points at them.
const (
	EtcdPath                = "/webhooks/validate-etcd"
	EtcdCopyBackupsTaskPath = "/webhooks/validate-etcdcopybackupstask"
	EtcdOpsTaskPath         = "/webhooks/validate-etcdopstask"
	// ConfigurationName is the name of the ValidatingWebhookConfiguration.
	ConfigurationName = "etcd-druid-validation"
)

// AddToManager registers the three validators with the manager's webhook server.
func AddToManager(mgr manager.Manager) error {
	if err := builder.WebhookManagedBy(mgr, &druidv1alpha1.Etcd{}).
		WithValidator(EtcdValidator{}).
		WithValidatorCustomPath(EtcdPath).
		Complete(); err != nil {
		return err
	}
	if err := builder.WebhookManagedBy(mgr, &druidv1alpha1.EtcdCopyBackupsTask{}).
		WithValidator(CopyBackupsTaskValidator{}).
		WithValidatorCustomPath(EtcdCopyBackupsTaskPath).
		Complete(); err != nil {
		return err
	}
	return builder.WebhookManagedBy(mgr, &druidv1alpha1.EtcdOpsTask{}).
		WithValidator(OpsTaskValidator{Reader: mgr.GetAPIReader()}).
		WithValidatorCustomPath(EtcdOpsTaskPath).
		Complete()
}

// WebhookConfiguration is the ValidatingWebhookConfiguration that routes Etcd, EtcdCopyBackupsTask and EtcdOpsTask writes
// to druid's service. The seed bootstrap fills in the CA bundle of druid's serving certificate.
func WebhookConfiguration(service admissionregistrationv1.ServiceReference, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	webhook := func(name, resource, path string) admissionregistrationv1.ValidatingWebhook {
		return validatingwebhook.CreateUpdate(name, druidv1alpha1.SchemeGroupVersion, resource, admissionregistrationv1.NamespacedScope, service, path, caBundle)
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			webhook("validate.etcds.druid.gardener.cloud", "etcds", EtcdPath),
			webhook("validate.etcdcopybackupstasks.druid.gardener.cloud", "etcdcopybackupstasks", EtcdCopyBackupsTaskPath),
			webhook("validate.etcdopstasks.druid.gardener.cloud", "etcdopstasks", EtcdOpsTaskPath),
		},
	}
}
