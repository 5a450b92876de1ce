// Package gardenlet holds copies of the objects gardenlet deploys etcd-druid with (its ClusterRole and
// ValidatingWebhookConfiguration) and an identity bound to that role, so that suites run druid exactly
// under what gardenlet grants it.
package gardenlet

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ClusterRole is a COPY of the rules of Gardener's ClusterRole gardener.cloud:system:etcd-druid
// (gardener/gardener v1.150.0, pkg/component/etcd/etcd/bootstrap.go, getClusterRole): the identity
// gardenlet runs etcd-druid under. Keep it identical to Gardener's; it is what druid must cope with.
func ClusterRole() *rbacv1.ClusterRole {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "gardener.cloud:system:etcd-druid"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete", "deletecollection"}},
			{APIGroups: []string{""}, Resources: []string{"secrets", "endpoints"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: all},
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"services", "configmaps"}, Verbs: []string{"get", "list", "patch", "update", "watch", "create", "delete"}},
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "patch", "update", "watch", "create", "delete"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: all},
			{APIGroups: []string{"druid.gardener.cloud"}, Resources: []string{"etcds", "etcdcopybackupstasks", "etcdopstasks"}, Verbs: all},
			{APIGroups: []string{"druid.gardener.cloud"}, Resources: []string{"etcds/status", "etcds/finalizers", "etcdcopybackupstasks/status",
				"etcdcopybackupstasks/finalizers", "etcdopstasks/status", "etcdopstasks/finalizers"}, Verbs: []string{"get", "update", "patch", "create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: append(append([]string{}, all...), "deletecollection")},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: all},
		},
	}
}

// WebhookConfiguration is a COPY of Gardener's ValidatingWebhookConfiguration etcd-druid
// (gardener/gardener v1.150.0, pkg/component/etcd/etcd/bootstrap.go, getValidatingWebhookConfiguration)
// for a druid in druidNamespace: both entries call upstream druid's path, fail closed, and the scale entry
// has no object selector.
func WebhookConfiguration(druidNamespace string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	updateDelete := []admissionregistrationv1.OperationType{admissionregistrationv1.Update, admissionregistrationv1.Delete}
	deleteOnly := []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
	clientConfig := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Name: "etcd-druid", Namespace: druidNamespace, Path: ptr.To("/webhooks/etcdcomponents"), Port: ptr.To(int32(443))}}
	rule := func(ops []admissionregistrationv1.OperationType, group string, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources, Scope: ptr.To(admissionregistrationv1.AllScopes)}}
	}
	webhook := func(name string, selector *metav1.LabelSelector, rules ...admissionregistrationv1.RuleWithOperations) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name, ClientConfig: clientConfig, FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchPolicy: ptr.To(admissionregistrationv1.Exact), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds: ptr.To(int32(10)), AdmissionReviewVersions: []string{"v1", "v1beta1"}, ObjectSelector: selector, Rules: rules,
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-druid"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			webhook("etcdcomponents.webhooks.druid.gardener.cloud",
				&metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/managed-by": "etcd-druid"}},
				rule(updateDelete, "", "serviceaccounts", "services", "configmaps"),
				rule(deleteOnly, "", "persistentvolumeclaims"),
				rule(updateDelete, "rbac.authorization.k8s.io", "roles", "rolebindings"),
				rule(updateDelete, "apps", "statefulsets"),
				rule(updateDelete, "policy", "poddisruptionbudgets"),
				rule(updateDelete, "batch", "jobs"),
				rule(deleteOnly, "coordination.k8s.io", "leases"),
			),
			webhook("stsscale.etcdcomponents.webhooks.druid.gardener.cloud", nil,
				rule(updateDelete, "apps", "statefulsets/scale"),
			),
		},
	}
}
