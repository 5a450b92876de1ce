package etcd

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/operators"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/poddisruptionbudget"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/permissions"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// ControllerName names the controller in logs, metrics and as the events' reporting controller.
const ControllerName = "etcd"

// Retry back-off of failed reconciles (e.g. missing secrets): fast at first, and capped so that an Etcd
// whose secret appears without a watch event (e.g. during a druid restart) still converges in minutes.
const (
	retryBaseDelay = time.Second
	retryMaxDelay  = 2 * time.Minute
)

// Option customises AddToManager.
type Option func(*Reconciler)

// WithDeletionHooks adds hooks that run before the Etcd's finalizer is removed (see DeletionHook).
func WithDeletionHooks(hooks ...DeletionHook) Option {
	return func(r *Reconciler) { r.hooks = append(r.hooks, hooks...) }
}

// WithClock replaces the clock the flows judge lease ages with.
func WithClock(c clock.PassiveClock) Option {
	return func(r *Reconciler) { r.clock = c }
}

// WithFullSnapshotRequester replaces what asks the backup leader for the full snapshot before hibernation
// or new images (fullsnapshot.HTTP on the client Service); tests point it at a stand-in sidecar.
func WithFullSnapshotRequester(req fullsnapshot.Requester) Option {
	return func(r *Reconciler) { r.snapshots = req }
}

// AddToManager registers the Etcd controller with mgr. The manager must have been created with
// CacheOptions and ClientOptions, so that the kinds druid creates are cached only when druid manages them
// and secrets are cached as digests, never with their values. cfg is defaulted and validated here.
func AddToManager(ctx context.Context, mgr manager.Manager, cfg config.EtcdController, opts ...Option) error {
	cfg.Default()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := secretref.AddIndex(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}

	// A role without an optional component's permissions (Gardener's ClusterRole has no NetworkPolicies)
	// makes druid skip it, found out before any cache or watch of it exists: a watch of a forbidden kind
	// never syncs, and every reconcile reading it would wait forever.
	missing, err := probePermissions(ctx, mgr.GetClient())
	if err != nil {
		return err
	}
	if len(missing.components) > 0 || len(missing.pvcDeletion) > 0 {
		log.FromContext(ctx).Info("druid's role lacks permissions of optional features; they are skipped", "components", missing.message(),
			"quorumLossRecovery", permissions.Join(missing.pvcDeletion))
	}
	r := &Reconciler{
		client:   mgr.GetClient(),
		reader:   mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder("etcd-druid"),
		missing:  missing,
		// The spec flow checks the referenced secrets with every run, on the cache's digests of them.
		secrets: secretReaders{digests: mgr.GetCache(), live: mgr.GetAPIReader()},
		// The PDB's minAvailable follows the heal decision table: raised while AllMembersReady or BackupReady is False.
		registry: operators.New(component.Clients{Client: mgr.GetClient(), Live: mgr.GetAPIReader()}, operators.Options{Images: cfg.Images, LocalBackup: cfg.LocalBackup,
			BackupPortAccess: cfg.BackupPortAccess, PDBMinAvailable: poddisruptionbudget.DecisionTablePolicy, Skip: missing.skippedKinds()}),
		config: cfg,
		clock:  clock.RealClock{},
		// Secrets are read from the apiserver: druid's cache holds none with their data.
		snapshots: &fullsnapshot.HTTP{Reader: mgr.GetAPIReader()},
	}
	for _, opt := range opts {
		opt(r)
	}
	// The per-Etcd metrics are read from the manager's cache at scrape time.
	registerCollector(mgr.GetCache())

	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&druidv1alpha1.Etcd{}, builder.WithPredicates(etcdPredicate())).
		Owns(&appsv1.StatefulSet{}).
		Watches(&coordinationv1.Lease{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &druidv1alpha1.Etcd{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(memberLeasePredicate(cfg.EtcdMemberUnknownThreshold, r.clock.Now))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToEtcd), builder.WithPredicates(podPredicate())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToEtcds)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cfg.Workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](retryBaseDelay, retryMaxDelay),
		}).
		Complete(r)
}

// podToEtcd maps an etcd pod to its Etcd through the part-of label (pods are owned by the StatefulSet,
// not by the Etcd).
func podToEtcd(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[druidv1alpha1.LabelPartOfKey]
	if name == "" || obj.GetLabels()[druidv1alpha1.LabelManagedByKey] != druidv1alpha1.LabelManagedByValue {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// secretToEtcds maps a Secret event to every Etcd that references the secret, so that an Etcd waiting for
// a missing secret converges as soon as it appears, without anyone touching the Etcd.
func (r *Reconciler) secretToEtcds(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &druidv1alpha1.EtcdList{}
	key := secretref.Key(obj.GetNamespace(), obj.GetName())
	if err := r.client.List(ctx, list, client.MatchingFields{secretref.IndexName: key}); err != nil {
		log.FromContext(ctx).Error(err, "Listing Etcds referencing a secret failed", "secret", key)
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, etcd := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&etcd)})
	}
	return requests
}

var _ reconcile.Reconciler = &Reconciler{}

// NewManagerOptions returns manager options with CacheOptions and ClientOptions set, for the binary and the
// tests to start from.
func NewManagerOptions(base ctrl.Options) ctrl.Options {
	base.Cache = CacheOptions()
	base.Client = ClientOptions()
	return base
}
