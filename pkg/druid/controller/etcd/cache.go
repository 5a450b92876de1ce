package etcd

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ManagedBySelector selects the objects druid manages.
func ManagedBySelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue})
}

// dataVolumeWarningSelector selects the events druid reads: warnings about PersistentVolumeClaims
// (dataVolumeWarnings keeps those of the Etcd's members).
func dataVolumeWarningSelector() fields.Selector {
	return fields.SelectorFromSet(fields.Set{"involvedObject.kind": "PersistentVolumeClaim", "type": corev1.EventTypeWarning})
}

// CacheOptions are the manager cache options the controller needs. Every kind druid creates for an Etcd
// (StatefulSet, Leases, ServiceAccount, Role, RoleBinding, Services, ConfigMap, PodDisruptionBudget) and
// the etcd Pods are cached only when labelled app.kubernetes.io/managed-by=etcd-druid: a seed has a Lease
// per node and per leader election, and many pods, services and config maps; druid must never cache all of
// them. Events are cached only when they are warnings about PersistentVolumeClaims. Cached objects drop
// their managedFields, which druid never reads and which are a large part of every object.
//
// The consequence of the label selection: an object of those kinds that druid should manage but that lost
// its label is invisible to reads through the cache. Syncing it still works: the create after the cache
// miss fails with AlreadyExists, and the operator then reads the object from the apiserver and patches it,
// which puts the label back (component.CreateOrPatch). Until the next spec reconcile, the status flow
// does not see such an object, and the deletion flow does not wait for it (its owner reference lets the
// garbage collector remove it with the Etcd).
func CacheOptions() cache.Options {
	managed := cache.ByObject{Label: ManagedBySelector()}
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}:         managed,
			&corev1.Pod{}:                   managed,
			&appsv1.StatefulSet{}:           managed,
			&corev1.ServiceAccount{}:        managed,
			&corev1.Service{}:               managed,
			&corev1.ConfigMap{}:             managed,
			&rbacv1.Role{}:                  managed,
			&rbacv1.RoleBinding{}:           managed,
			&policyv1.PodDisruptionBudget{}: managed,
			&networkingv1.NetworkPolicy{}:   managed,
			&corev1.Event{}:                 {Field: dataVolumeWarningSelector()},
		},
	}
}

// ClientOptions make the manager's client read Secrets from the apiserver, never through the cache: an
// informer for Secrets would hold the data of every Secret of the seed. druid reads a Secret's data only
// in a spec reconcile (the referenced keys must be present; a Local store's host path), and that read must
// be fresh anyway. Controllers that need only Secret metadata (existence, finalizers) read it from the
// manager's cache (mgr.GetCache()), where a metadata-only informer holds it: the client would bypass the
// cache for those reads too, because it decides by kind.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}
