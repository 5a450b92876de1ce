package protection

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Path is where druid serves the protection webhook, MemberPodsPath the member identity webhook;
// ConfigurationName names their configuration. UpstreamPath is upstream etcd-druid's path of the same
// webhook, which Gardener's webhook configuration calls for both its entries (the components and the
// StatefulSet scale subresource): druid serves the same handler there, so that it runs unchanged under
// gardenlet's deployment.
const (
	Path              = "/webhooks/etcd-components-protection"
	UpstreamPath      = "/webhooks/etcdcomponents"
	MemberPodsPath    = "/webhooks/etcd-member-pods"
	ConfigurationName = "etcd-druid-components-protection"
)

// AddToManager serves the handlers on Path (and UpstreamPath) and MemberPodsPath of the manager's webhook
// server, reading through the API reader. podControllerUsers are kube-controller-manager's users (DefaultPodControllerUsers
// unless the seed's differ); the configuration (WebhookConfiguration) must name the same. garbageCollectorUsers
// are its garbage collector's (DefaultGarbageCollectorUsers unless the seed's differ).
func AddToManager(mgr manager.Manager, reconcilerServiceAccount string, exempt, podControllerUsers, garbageCollectorUsers []string) {
	components := &webhook.Admission{Handler: &Handler{
		Reader:                   mgr.GetAPIReader(),
		ReconcilerServiceAccount: reconcilerServiceAccount,
		ExemptServiceAccounts:    exempt,
		GarbageCollectorUsers:    garbageCollectorUsers,
	}}
	mgr.GetWebhookServer().Register(Path, components)
	mgr.GetWebhookServer().Register(UpstreamPath, components)
	mgr.GetWebhookServer().Register(MemberPodsPath, &webhook.Admission{Handler: &MemberPodHandler{
		Reader:                   mgr.GetAPIReader(),
		ReconcilerServiceAccount: reconcilerServiceAccount,
		ExemptServiceAccounts:    exempt,
		PodControllerUsers:       podControllerUsers,
	}})
}

// DefaultPodControllerUsers are kube-controller-manager's users that create pods in a cluster set up the
// usual way: itself (without --use-service-account-credentials) and the service accounts of its
// controllers that create pods. The StatefulSet controller must recreate member pods while druid is down,
// so their requests go to a member pods webhook that fails open; the other pod-creating controllers are
// listed so that a workload unrelated to etcd never waits for druid either. While druid runs, their pods
// are judged like everybody's: a stranger's Deployment, Job or DaemonSet whose template carries member
// labels gets no pods. A seed whose kube-controller-manager authenticates under another name configures
// its own list (druid's --pod-controller-users): otherwise its member pods go to the entry that fails
// closed and are refused.
var DefaultPodControllerUsers = []string{
	"system:kube-controller-manager",
	"system:serviceaccount:kube-system:statefulset-controller",
	"system:serviceaccount:kube-system:replicaset-controller",
	"system:serviceaccount:kube-system:replication-controller",
	"system:serviceaccount:kube-system:daemon-set-controller",
	"system:serviceaccount:kube-system:job-controller",
}

// Match conditions of the components webhook (CEL, evaluated by the apiserver before it calls druid).
// Requests they exclude never reach druid, so they succeed while druid's webhook server is down.
const (
	// SkipLeaseRenewalsCondition lets the etcd pods' service account (named like the Etcd, the leases'
	// part-of label) renew its member and snapshot leases without calling druid, as long as the labels
	// stay as they are: a druid outage must never make leases stale (a stale lease reads as a lost member).
	SkipLeaseRenewalsCondition = `!(request.resource.resource == 'leases' && request.operation == 'UPDATE' && ` +
		`has(oldObject.metadata.labels) && has(object.metadata.labels) && 'app.kubernetes.io/part-of' in oldObject.metadata.labels && ` +
		`request.userInfo.username == 'system:serviceaccount:' + request.namespace + ':' + oldObject.metadata.labels['app.kubernetes.io/part-of'] && ` +
		`object.metadata.labels == oldObject.metadata.labels)`
	// MemberIdentityChangesCondition sends pod CREATEs, and UPDATEs whose managed-by or part-of label is
	// not the same before and after: an UPDATE that keeps them (the StatefulSet controller adopting a pod,
	// the kubelet's status) never depends on druid. Written so that no label lookup can fail: a failing
	// condition would apply the failure policy.
	MemberIdentityChangesCondition = `request.operation != 'UPDATE' || !has(oldObject.metadata.labels) || !has(object.metadata.labels) || ` +
		`!('app.kubernetes.io/managed-by' in oldObject.metadata.labels) || !('app.kubernetes.io/part-of' in oldObject.metadata.labels) || ` +
		`!('app.kubernetes.io/managed-by' in object.metadata.labels) || !('app.kubernetes.io/part-of' in object.metadata.labels) || ` +
		`oldObject.metadata.labels['app.kubernetes.io/managed-by'] != object.metadata.labels['app.kubernetes.io/managed-by'] || ` +
		`oldObject.metadata.labels['app.kubernetes.io/part-of'] != object.metadata.labels['app.kubernetes.io/part-of']`
	// LegacyMemberIdentityChangesCondition is MemberIdentityChangesCondition for the legacy selector's
	// labels, name and instance.
	LegacyMemberIdentityChangesCondition = `request.operation != 'UPDATE' || !has(oldObject.metadata.labels) || !has(object.metadata.labels) || ` +
		`!('name' in oldObject.metadata.labels) || !('instance' in oldObject.metadata.labels) || ` +
		`!('name' in object.metadata.labels) || !('instance' in object.metadata.labels) || ` +
		`oldObject.metadata.labels['name'] != object.metadata.labels['name'] || ` +
		`oldObject.metadata.labels['instance'] != object.metadata.labels['instance']`
	// OnlyLabelChangesOfPodsAndPVCsCondition sends UPDATEs of pods and PVCs only when they remove or change
	// a label: relabelling takes a member out of druid's hands, while kube-controller-manager's own updates
	// (binding a PVC, adopting a pod) must not depend on druid.
	OnlyLabelChangesOfPodsAndPVCsCondition = `!(request.resource.resource in ['pods', 'persistentvolumeclaims'] && request.operation == 'UPDATE') || ` +
		`(has(oldObject.metadata.labels) && oldObject.metadata.labels.exists(k, !has(object.metadata.labels) || !(k in object.metadata.labels) || object.metadata.labels[k] != oldObject.metadata.labels[k]))`
)

// WebhookConfiguration routes UPDATE and DELETE of every kind druid manages (and UPDATE of PVCs and pods
// that changes their labels, and DELETE of PVCs), limited to objects labelled as managed by druid before or
// after the change, and scaling of any StatefulSet to the protection webhook. Lease renewals of the etcd
// pods are excluded (SkipLeaseRenewalsCondition). CREATE of pods with an Etcd's member labels, and UPDATE
// that gives a pod those labels (MemberIdentityChangesCondition), go to the member pods webhook in two
// entries: the requests of podControllerUsers (DefaultPodControllerUsers unless the seed's
// kube-controller-manager authenticates otherwise) fail open, everybody else's fail closed. The legacy
// member labels (instance, name=etcd) get the same two entries: a label selector cannot say "either".
func WebhookConfiguration(service admissionregistrationv1.ServiceReference, caBundle []byte, podControllerUsers []string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	svc := service
	svc.Path = ptr.To(Path)
	updateAndDelete := []admissionregistrationv1.OperationType{admissionregistrationv1.Update, admissionregistrationv1.Delete}
	rule := func(operations []admissionregistrationv1.OperationType, group string, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{
			Operations: operations,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: resources,
				Scope: ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}
	}
	webhook := func(name string, selector *metav1.LabelSelector, failure admissionregistrationv1.FailurePolicyType, rules ...admissionregistrationv1.RuleWithOperations) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: caBundle},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(failure),
			TimeoutSeconds:          ptr.To(int32(10)),
			ObjectSelector:          selector,
			Rules:                   rules,
		}
	}
	managedByDruid := &metav1.LabelSelector{MatchLabels: map[string]string{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue,
	}}
	memberLabelled := &metav1.LabelSelector{
		MatchLabels:      map[string]string{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: druidv1alpha1.LabelPartOfKey, Operator: metav1.LabelSelectorOpExists}},
	}
	legacyMemberLabelled := &metav1.LabelSelector{
		MatchLabels:      map[string]string{druidv1alpha1.LabelLegacyNameKey: druidv1alpha1.LabelLegacyNameValue},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: druidv1alpha1.LabelLegacyInstanceKey, Operator: metav1.LabelSelectorOpExists}},
	}
	memberSvc := service
	memberSvc.Path = ptr.To(MemberPodsPath)
	createAndUpdate := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	components := webhook("protect.etcd-components.druid.gardener.cloud", managedByDruid, admissionregistrationv1.Fail,
		rule(updateAndDelete, "", "serviceaccounts", "services", "configmaps", "persistentvolumeclaims"),
		rule(updateAndDelete, "rbac.authorization.k8s.io", "roles", "rolebindings"),
		rule(updateAndDelete, "apps", "statefulsets"),
		rule(updateAndDelete, "policy", "poddisruptionbudgets"),
		rule(updateAndDelete, "networking.k8s.io", "networkpolicies"),
		rule(updateAndDelete, "batch", "jobs"),
		rule(updateAndDelete, "coordination.k8s.io", "leases"),
		rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Update}, "", "pods"),
	)
	components.MatchConditions = []admissionregistrationv1.MatchCondition{
		{Name: "skip-etcd-lease-renewals", Expression: SkipLeaseRenewalsCondition},
		{Name: "only-label-changes-of-pods-and-pvcs", Expression: OnlyLabelChangesOfPodsAndPVCsCondition},
	}
	memberPods := func(name string, selector *metav1.LabelSelector, identityChanges string, failure admissionregistrationv1.FailurePolicyType,
		users string) admissionregistrationv1.ValidatingWebhook {
		w := webhook(name, selector, failure, rule(createAndUpdate, "", "pods"))
		w.ClientConfig.Service = &memberSvc
		w.MatchConditions = []admissionregistrationv1.MatchCondition{
			{Name: "member-identity-changes", Expression: identityChanges},
			{Name: "pod-controller-users", Expression: users},
		}
		return w
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			components,
			// Pods that claim an Etcd's member labels (MemberPodHandler). kube-controller-manager's requests
			// fail open: the StatefulSet controller must recreate member pods while druid is down; everybody
			// else's fail closed.
			memberPods("member-pods-by-controllers.etcd-components.druid.gardener.cloud", memberLabelled, MemberIdentityChangesCondition,
				admissionregistrationv1.Ignore, PodControllerUsersCondition(podControllerUsers, true)),
			memberPods("member-pods.etcd-components.druid.gardener.cloud", memberLabelled, MemberIdentityChangesCondition,
				admissionregistrationv1.Fail, PodControllerUsersCondition(podControllerUsers, false)),
			memberPods("legacy-member-pods-by-controllers.etcd-components.druid.gardener.cloud", legacyMemberLabelled, LegacyMemberIdentityChangesCondition,
				admissionregistrationv1.Ignore, PodControllerUsersCondition(podControllerUsers, true)),
			memberPods("legacy-member-pods.etcd-components.druid.gardener.cloud", legacyMemberLabelled, LegacyMemberIdentityChangesCondition,
				admissionregistrationv1.Fail, PodControllerUsersCondition(podControllerUsers, false)),
			// The apiserver matches an object selector against the Scale object, which carries no labels, so
			// the scale subresource gets a webhook of its own; the handler looks up the StatefulSet's labels.
			// Without a selector it sees every StatefulSet of the seed, so it fails open: an unreachable druid
			// must not block scaling unrelated workloads.
			webhook("protect.etcd-statefulset-scale.druid.gardener.cloud", nil, admissionregistrationv1.Ignore,
				rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Update}, "apps", "statefulsets/scale"),
			),
		},
	}
}

// PodControllerUsersCondition matches requests of users (or, with controllers false, of everybody else).
// The names go into CEL string literals: ValidatePodControllerUsers refuses the characters that could end
// one.
func PodControllerUsersCondition(users []string, controllers bool) string {
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = "'" + u + "'"
	}
	condition := "request.userInfo.username in [" + strings.Join(quoted, ", ") + "]"
	if !controllers {
		condition = "!(" + condition + ")"
	}
	return condition
}

// ValidatePodControllerUsers refuses an empty list (every member pod would then depend on druid) and names
// that cannot stand in a CEL string literal.
func ValidatePodControllerUsers(users []string) error {
	if len(users) == 0 {
		return fmt.Errorf("pod controller users: none named; the StatefulSet controller could create no member pod while druid is down")
	}
	for _, u := range users {
		if u == "" || strings.ContainsAny(u, "'\\\n\r") {
			return fmt.Errorf("pod controller users: %q is no user name", u)
		}
	}
	return nil
}
