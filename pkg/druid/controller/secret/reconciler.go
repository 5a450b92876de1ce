// Package secret is druid's secret finalizer controller: every Secret that an Etcd references (TLS CA, server
// and client secrets, the backup store secret, the auth secret) carries the finalizer
// druid.gardener.cloud/etcd-druid, so that deleting it under a running cluster only marks it for deletion.
// The finalizer goes once no Etcd holds the secret any more (secretref.HoldsSecrets: an Etcd being deleted
// holds its secrets until druid's own finalizer is gone from it, because its pods may still mount them).
//
// The controller reads Secrets from druid's cache, which holds them as digests without their values: it never
// needs their data, and caching the data of every Secret in a seed would cost memory and widen what a
// compromised druid exposes.
package secret

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// Event reasons on Secrets.
const (
	// EventReasonDeletionBlocked: someone deleted a Secret that an Etcd still needs; it stays (Terminating)
	// until no Etcd references it.
	EventReasonDeletionBlocked = "DeletionBlockedByEtcd"
)

// Reconciler adds or removes druid's finalizer on one Secret per call.
type Reconciler struct {
	// Client reads Etcds through the cache with the secretref.IndexName index and patches Secret metadata.
	Client client.Client
	// SecretCache reads Secrets from the manager's cache, which holds them as digests (etcd.CacheOptions:
	// complete metadata, no values), the informer the Etcd controller judges referenced secrets on: druid's
	// client reads every Secret from the apiserver (etcd.ClientOptions), and a live read per Secret event
	// would cost a request for every Secret of the seed at each start.
	SecretCache client.Reader
	Recorder    events.EventRecorder
}

// emptySecretMeta is the metadata-only Secret object the controller patches.
func emptySecretMeta(key types.NamespacedName) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// Reconcile implements reconcile.Reconciler for Secrets.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("secret", req.NamespacedName)
	cached := &corev1.Secret{}
	if err := r.SecretCache.Get(ctx, req.NamespacedName, cached); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The finalizer is patched on the metadata alone: the answer carries no data either.
	secret := emptySecretMeta(req.NamespacedName)
	cached.ObjectMeta.DeepCopyInto(&secret.ObjectMeta)

	holders, err := r.holders(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	hasFinalizer := controllerutil.ContainsFinalizer(secret, druidv1alpha1.FinalizerName)
	deleting := !secret.DeletionTimestamp.IsZero()

	switch {
	case len(holders) > 0 && deleting:
		if !hasFinalizer {
			// The apiserver refuses new finalizers on an object being deleted; it is too late to protect it.
			logger.Info("Referenced secret is being deleted without druid's finalizer; it cannot be protected", "etcds", holders)
			return ctrl.Result{}, nil
		}
		logger.Info("Referenced secret is being deleted; keeping it until no Etcd references it", "etcds", holders)
		r.Recorder.Eventf(secret, nil, corev1.EventTypeWarning, EventReasonDeletionBlocked, "Delete",
			"secret is still referenced by Etcd(s) %s; it is deleted once none references it", strings.Join(holders, ", "))
		return ctrl.Result{}, nil
	case len(holders) > 0 && !hasFinalizer:
		logger.Info("Adding finalizer to referenced secret", "etcds", holders)
		return ctrl.Result{}, r.patchFinalizer(ctx, secret, controllerutil.AddFinalizer)
	case len(holders) == 0 && hasFinalizer:
		logger.Info("Removing finalizer from secret no Etcd references any more")
		return ctrl.Result{}, r.patchFinalizer(ctx, secret, controllerutil.RemoveFinalizer)
	}
	return ctrl.Result{}, nil
}

// holders lists "<namespace>/<name>" of the Etcds that hold the secret.
func (r *Reconciler) holders(ctx context.Context, secret types.NamespacedName) ([]string, error) {
	etcds := &druidv1alpha1.EtcdList{}
	if err := r.Client.List(ctx, etcds, client.MatchingFields{secretref.IndexName: secretref.Key(secret.Namespace, secret.Name)}); err != nil {
		return nil, fmt.Errorf("listing Etcds that reference secret %s: %w", secret, err)
	}
	var names []string
	for i := range etcds.Items {
		names = append(names, client.ObjectKeyFromObject(&etcds.Items[i]).String())
	}
	slices.Sort(names)
	return names, nil
}

// patchFinalizer changes the finalizers with an optimistic lock, so that a concurrent change to the list
// (another controller's finalizer) is never overwritten by the merge patch's whole-list replacement.
func (r *Reconciler) patchFinalizer(ctx context.Context, secret *metav1.PartialObjectMetadata, change func(client.Object, string) bool) error {
	before := secret.DeepCopy()
	if !change(secret, druidv1alpha1.FinalizerName) {
		return nil
	}
	err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching the finalizers of secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return nil
}
