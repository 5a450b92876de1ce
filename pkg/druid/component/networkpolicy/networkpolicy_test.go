package networkpolicy

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

func backupRule(t *testing.T, spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicyIngressRule {
	t.Helper()
	for _, rule := range spec.Ingress {
		if rule.Ports[0].Port.IntVal == 8080 {
			return rule
		}
	}
	t.Fatalf("no rule for the backup port: %v", spec.Ingress)
	return networkingv1.NetworkPolicyIngressRule{}
}

func namespaces(names ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: NamespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: names}}}
}

// The backup-restore port serves unauthenticated endpoints in Gardener's sidecar image: labelled pods may
// reach it from the Etcd's namespace and the configured ones only, druid's pods from druid's namespace
// only; no peer selects every namespace. Gardener's cross-namespace label (to-all-shoots-<service>, which
// gardenlet carries for its final snapshot call) is admitted from the configured namespaces and druid's.
// Druid's pods are admitted with the label of our chart and with the one of the Deployment gardenlet
// writes for druid (Gardener's pkg/component/etcd/etcd/bootstrap.go), which carries no other label we
// could select by for etcd-events.
func TestBackupPortOnlyFromTheNamedNamespaces(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a"}}
	druidv1alpha1.SetDefaults(etcd)
	members := druidv1alpha1.ManagedLabels(etcd)
	labelled := &metav1.LabelSelector{MatchLabels: map[string]string{AccessLabel("etcd-main-client", 8080): LabelValueAllowed}}
	allShoots := &metav1.LabelSelector{MatchLabels: map[string]string{
		"networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp-8080": LabelValueAllowed}}
	druid := &metav1.LabelSelector{MatchLabels: DruidPodLabels}
	gardenletsDruid := &metav1.LabelSelector{MatchLabels: map[string]string{"gardener.cloud/role": "etcd-druid"}}

	cases := map[string]struct {
		access config.BackupPortAccess
		want   []networkingv1.NetworkPolicyPeer
	}{
		"default: druid's namespace": {config.BackupPortAccess{DruidNamespace: "garden"}, []networkingv1.NetworkPolicyPeer{
			{PodSelector: &metav1.LabelSelector{MatchLabels: members}},
			{PodSelector: labelled},
			{PodSelector: labelled, NamespaceSelector: namespaces("garden")},
			{PodSelector: allShoots, NamespaceSelector: namespaces("garden")},
			{PodSelector: druid, NamespaceSelector: namespaces("garden")},
			{PodSelector: gardenletsDruid, NamespaceSelector: namespaces("garden")},
		}},
		"configured namespaces": {config.BackupPortAccess{DruidNamespace: "garden", ClientNamespaces: []string{"monitoring", "shoot--a", "garden"}}, []networkingv1.NetworkPolicyPeer{
			{PodSelector: &metav1.LabelSelector{MatchLabels: members}},
			{PodSelector: labelled},
			{PodSelector: labelled, NamespaceSelector: namespaces("garden", "monitoring")},
			{PodSelector: allShoots, NamespaceSelector: namespaces("garden", "monitoring")},
			{PodSelector: druid, NamespaceSelector: namespaces("garden")},
			{PodSelector: gardenletsDruid, NamespaceSelector: namespaces("garden")},
		}},
		"no further namespaces: gardenlet's label from druid's still": {config.BackupPortAccess{DruidNamespace: "garden", ClientNamespaces: []string{}}, []networkingv1.NetworkPolicyPeer{
			{PodSelector: &metav1.LabelSelector{MatchLabels: members}},
			{PodSelector: labelled},
			{PodSelector: allShoots, NamespaceSelector: namespaces("garden")},
			{PodSelector: druid, NamespaceSelector: namespaces("garden")},
			{PodSelector: gardenletsDruid, NamespaceSelector: namespaces("garden")},
		}},
		"druid outside the cluster": {config.BackupPortAccess{}, []networkingv1.NetworkPolicyPeer{
			{PodSelector: &metav1.LabelSelector{MatchLabels: members}},
			{PodSelector: labelled},
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rule := backupRule(t, desiredSpec(etcd, members, c.access))
			if len(rule.From) != len(c.want) {
				t.Fatalf("from = %+v, want %+v", rule.From, c.want)
			}
			for i := range c.want {
				got, want := rule.From[i], c.want[i]
				if !equalSelector(got.PodSelector, want.PodSelector) || !equalSelector(got.NamespaceSelector, want.NamespaceSelector) {
					t.Errorf("peer %d = %+v / %+v, want %+v / %+v", i, got.PodSelector, got.NamespaceSelector, want.PodSelector, want.NamespaceSelector)
				}
			}
		})
	}
}

func equalSelector(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return metav1.FormatLabelSelector(a) == metav1.FormatLabelSelector(b)
}
