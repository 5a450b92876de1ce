package etcd

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ManagedBySelector selects the objects druid manages.
func ManagedBySelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue})
}

// CacheOptions are the manager cache options the controller needs: the informers for Leases, Pods and
// StatefulSets only hold objects labelled app.kubernetes.io/managed-by=etcd-druid. A seed has a Lease per
// node, per leader election and per etcd member, and many pods; druid must never cache all of them.
// The consequence: an object of those kinds that druid should manage but that lost its label is invisible
// to the controller (the component operators put the label back on every sync they can see).
func CacheOptions() cache.Options {
	managed := cache.ByObject{Label: ManagedBySelector()}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&coordinationv1.Lease{}: managed,
		&corev1.Pod{}:           managed,
		&appsv1.StatefulSet{}:   managed,
	}}
}

// ClientOptions make the manager's client read the other kinds the controller touches directly from the
// apiserver instead of starting cluster-wide informers for them: Secrets (druid must not hold every secret
// of the seed in memory; the controller watches only their metadata), Events, and the kinds the spec flow
// writes rarely (ServiceAccounts, Roles, RoleBindings, Services, ConfigMaps, PodDisruptionBudgets).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{
		&corev1.Secret{},
		&corev1.Event{},
		&corev1.ServiceAccount{},
		&corev1.Service{},
		&corev1.ConfigMap{},
		&rbacv1.Role{},
		&rbacv1.RoleBinding{},
		&policyv1.PodDisruptionBudget{},
	}}}
}
