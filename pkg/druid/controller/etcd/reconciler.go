package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// DeletionHook runs in the deletion flow after every component is gone and before the Etcd's finalizer is
// removed; an error retries the deletion flow. It is where the secret finalizer controller (or anything
// else holding on to an Etcd's resources) can release them synchronously.
type DeletionHook func(ctx context.Context, etcd *druidv1alpha1.Etcd) error

// Reconciler runs the deletion, spec, status and heal flows for one Etcd per call.
type Reconciler struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	registry component.Registry
	config   config.EtcdController
	clock    clock.PassiveClock
	hooks    []DeletionHook
	// snapshots asks the backup leader for the full snapshot before hibernation or new images.
	snapshots fullsnapshot.Requester
	// snapshotRetries spaces out those snapshot requests while they fail.
	snapshotRetries snapshotRetries
	// missing is what druid's role does not allow (probed at start-up): skipped components, the
	// quorum-loss recovery's PVC deletion.
	missing missingPermissions
	// secrets are where the secrets gate reads the referenced secrets: the cache's digests, the
	// apiserver to confirm a problem (secrets.go).
	secrets secretReaders
	// warned is the generation whose validation warnings were last announced, per Etcd UID.
	warned sync.Map
	// own is druid's last write of each Etcd, to tell a cache that lags behind it (ownwrites.go).
	own ownWrites
}

// Reconcile runs the deletion flow for an Etcd being deleted; otherwise the spec flow when one is due,
// then the status flow, which also runs when the spec flow failed, so that the status keeps reporting the
// cluster's health, and after a successful status flow the heal flow and then the member pod update
// (podupdate.go) on the status flow's observation.
// A successful spec run's result goes out with the status flow's write (one status write, not two), and
// its operation annotation is removed after that write.
// It requeues after StatusSyncPeriod (or earlier when a flow asks for it).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("etcd", req.NamespacedName)
	ctx = log.IntoContext(ctx, logger)
	etcd := &druidv1alpha1.Etcd{}
	if err := r.client.Get(ctx, req.NamespacedName, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			r.own.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !etcd.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(etcd, druidv1alpha1.FinalizerName) {
			return ctrl.Result{}, nil
		}
		return flow.Combine(0, flow.Run(ctx, logger.WithName("deletion"), r.deletionSteps(etcd)))
	}

	held := &heldStatus{}
	var spec *specRun
	specResult := flow.Continue()
	wanted, why, err := r.specReconcileWanted(ctx, etcd)
	if errors.Is(err, errCacheBehindOwnWrite) {
		logger.V(1).Info("The cache has not caught up with druid's last write of the Etcd yet, reconciling again", "resourceVersion", etcd.ResourceVersion)
		return ctrl.Result{RequeueAfter: conflictRetryDelay}, nil
	}
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if wanted {
		if SpecReconcileSuspended(etcd) {
			logger.Info("Spec reconcile suspended by annotation", "trigger", why, "annotation", druidv1alpha1.SuspendEtcdSpecReconcileAnnotation)
			r.recorder.Eventf(etcd, nil, "Warning", EventReasonSpecReconcileSuspended, actionReconcile,
				"spec reconcile (%s) skipped: annotation %s is set; the status is still updated", why, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation)
		} else {
			logger.V(1).Info("Running spec reconcile", "trigger", why)
			spec = r.newSpecRun(etcd, held)
			specResult = flow.Run(ctx, logger.WithName("spec"), spec.steps())
		}
	}
	if spec == nil {
		flow.Run(ctx, logger.WithName("adopt"), []flow.Step{r.adoptStep(etcd)}) // never fails: see adoptStep
	}

	status := r.newStatusRun(etcd, held, spec)
	statusResult := flow.Run(ctx, logger.WithName("status"), status.steps())
	if spec != nil && spec.succeeded { // the spec flow's last step held its success; nothing else ended it
		specResult = spec.finish(log.IntoContext(ctx, logger.WithName("spec")))
	}
	healResult, updateResult := flow.Continue(), flow.Continue()
	if !statusResult.Failed() {
		healResult = flow.Run(ctx, logger.WithName("heal"), r.newHealFlow(etcd, status).steps())
		updateResult = flow.Run(ctx, logger.WithName("podupdate"), []flow.Step{r.podUpdateStep(etcd, status)})
	}
	for _, res := range []flow.Result{statusResult, healResult, updateResult} {
		if res.Failed() && apierrors.IsNotFound(res.Err()) {
			// The Etcd disappeared between the flows (e.g. the deletion finished); nothing left to do.
			return ctrl.Result{}, nil
		}
	}
	result, err := flow.Combine(r.config.StatusSyncPeriod, specResult, statusResult, healResult, updateResult)
	if apierrors.IsConflict(err) {
		// The cache lagged behind a write; start over soon from the newer object, without an error back-off.
		logger.V(1).Info("Conflict writing the Etcd, reconciling again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetryDelay}, nil
	}
	return result, err
}

// conflictRetryDelay is how soon a reconcile that hit a write conflict starts over.
const conflictRetryDelay = 200 * time.Millisecond

// specReconcileWanted applies the trigger contract. When the cached Etcd says a spec reconcile is due, it
// makes sure the cache does not lag behind druid's own writes (it may still show an operation annotation
// the previous run removed), since a spec run on a stale spec would roll the StatefulSet back: a cached
// copy that holds druid's last write of it (ownWrites) is decided on as it is; one that predates that
// write ends the reconcile with errCacheBehindOwnWrite, to start over once the cache caught up; when
// that cannot be told (no write recorded since druid started, say) it decides again on the stored
// object, and etcd is replaced with it. Should the cache lag behind someone else's write instead, the
// run's first write (recordStart's Processing, or a new Etcd's finalizer, with the cached
// resourceVersion) fails with a conflict before anything is synced, and the reconcile starts over from
// the newer object.
//
// The comparison with druid's own last write comes first for every Etcd: a new Etcd's run writes its
// finalizer before its first status write, and a reconcile that the run's own creations brought on
// (StatefulSet, leases) may see the finalizer without the success written after it. Where it cannot
// tell, an Etcd without lastOperation is taken from the cache as it is, with no read: druid's spec flow
// has not written its status, and a run on a copy that lags behind its finalizer fails that write with a
// conflict, as above.
func (r *Reconciler) specReconcileWanted(ctx context.Context, etcd *druidv1alpha1.Etcd) (bool, string, error) {
	wanted, why := SpecReconcileWanted(etcd, r.config.EnableEtcdSpecAutoReconcile)
	if !wanted {
		return false, why, nil
	}
	switch r.own.freshnessOf(etcd, r.clock.Now()) {
	case cacheHoldsOwnWrite:
		return wanted, why, nil
	case cacheBehindOwnWrite:
		return false, "", errCacheBehindOwnWrite
	}
	if etcd.Status.LastOperation == nil {
		return wanted, why, nil
	}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(etcd), etcd); err != nil {
		return false, "", err
	}
	if !etcd.DeletionTimestamp.IsZero() {
		return false, "", nil // the deletion flow takes over on the next reconcile
	}
	wanted, why = SpecReconcileWanted(etcd, r.config.EnableEtcdSpecAutoReconcile)
	return wanted, why, nil
}

// thresholds are the member grace periods of the configuration.
func (r *Reconciler) thresholds() health.Thresholds {
	return health.Thresholds{Unknown: r.config.EtcdMemberUnknownThreshold, NotReady: r.config.EtcdMemberNotReadyThreshold}
}
