package ensureetcd

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Path is where the extension serves the webhook; ConfigurationName names its configuration.
const (
	Path              = "/webhooks/ensure-etcd"
	ConfigurationName = "gardener-extension-backup-ensure-etcd"
	// WebhookName is the name of the only webhook of the configuration.
	WebhookName = "ensure-etcd.extensions.gardener.cloud"
)

// AddToManager serves the handler on Path of the manager's webhook server.
func AddToManager(mgr manager.Manager, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(Path, &webhook.Admission{Handler: &Handler{Config: cfg}})
	return nil
}

// WebhookConfiguration routes creates and updates of etcd-main and etcd-events to the extension. The name
// filter is a match condition, so the apiserver does not even call the webhook for Etcds of other owners.
// It fails closed: an Etcd created without the provider's storage class could not get it later.
func WebhookConfiguration(service admissionregistrationv1.ServiceReference, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	svc := service
	svc.Path = ptr.To(Path)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    WebhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: caBundle},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			TimeoutSeconds:          ptr.To(int32(10)),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "etcd-main-or-events",
				Expression: fmt.Sprintf("object.metadata.name in [%q, %q]", EtcdMainName, EtcdEventsName),
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{druidv1alpha1.GroupName},
					APIVersions: []string{druidv1alpha1.SchemeGroupVersion.Version},
					Resources:   []string{"etcds"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
		}},
	}
}
