package etcd

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
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
// Secrets are cached as digests (SecretDigest): their metadata and key names, never their values. Which
// secrets an Etcd references is known only from the Etcds (Gardener's secrets carry no common label, and
// shoots live in namespaces of their own), so the informer holds every Secret of the seed; as digests they
// cost about what a metadata-only informer costs. From the digests the Etcd controller judges the
// referenced secrets without a request to the apiserver, and the secret finalizer controller reads the
// finalizers, both from the same informer.
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
			&corev1.Secret{}:                {Transform: SecretDigest},
		},
	}
}

// SecretDigest is the cache's transform of Secrets: the data reduced to backupsecret.Digest (key names,
// whether each value is empty, a GCS credential file's type), the string data and managed fields dropped.
// What the cache returns for a Secret is therefore no Secret to use: its values are placeholders. Its
// metadata is complete.
func SecretDigest(obj any) (any, error) {
	if accessor, ok := obj.(metav1.Object); ok {
		accessor.SetManagedFields(nil)
	}
	if secret, ok := obj.(*corev1.Secret); ok {
		secret.Data = backupsecret.Digest(secret.Data)
		secret.StringData = nil
	}
	return obj, nil
}

// ClientOptions make the manager's client read Secrets from the apiserver, never through the cache: the
// cache holds digests of Secrets (CacheOptions), and a read of a Secret through the client wants its
// values (a Local store's host path, the TLS files of the full-snapshot request). Reads that need only
// metadata or key names ask the manager's cache (mgr.GetCache()) explicitly.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}
