// Package validatingwebhook builds the entries of the project's validating webhook configurations that
// judge creates and updates of one custom resource. Druid's Etcd validation and the backup extension's
// BackupEntry/BackupBucket validation are such entries; one builder keeps their failure policy, timeout
// and side-effect class the same, so a reviewer reads the rule once.
package validatingwebhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TimeoutSeconds bounds each call: the apiserver's default (10 s) and its maximum (30 s) are both longer
// than any of these checks needs, and a shorter bound answers a caller sooner while a webhook pod is gone.
const TimeoutSeconds = 10

// CreateUpdate is an entry named name that sends creates and updates of resource (in gv, of scope) to path
// on service, trusting caBundle. It fails closed: the callers route resources whose refused values would
// harm a running cluster, so an unreachable webhook must not let them through unchecked.
func CreateUpdate(name string, gv schema.GroupVersion, resource string, scope admissionregistrationv1.ScopeType,
	service admissionregistrationv1.ServiceReference, path string, caBundle []byte) admissionregistrationv1.ValidatingWebhook {
	svc := service
	svc.Path = ptr.To(path)
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: caBundle},
		AdmissionReviewVersions: []string{"v1"},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		TimeoutSeconds:          ptr.To(int32(TimeoutSeconds)),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{gv.Group},
				APIVersions: []string{gv.Version},
				Resources:   []string{resource},
				Scope:       ptr.To(scope),
			},
		}},
	}
}
