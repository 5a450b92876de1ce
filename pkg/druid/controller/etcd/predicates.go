package etcd

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// etcdPredicate lets through what can start a spec or deletion flow: creation, generation changes (spec
// edits; the apiserver also bumps the generation when deletion starts), annotation changes (operation,
// suspend) and deletion. The controller's own status writes change neither and do not loop back.
func etcdPredicate() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		DeleteFunc: func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// memberLeasePredicate lets through lease changes that change the status: creation and deletion, a new
// holder identity (member ID or role), the peer TLS annotation (the scale-up gate), the alarm annotations
// (the EtcdAlarm condition), the no-leader report (it changes at every beat, but only while a member
// sees no leader: a quorum loss confirmed by the members is acted on within a beat), the first renewal, and
// a renewal of a lease that had expired (a member coming back). Routine renewals of healthy members are
// left to the periodic status sync: with hundreds of clusters, one reconcile per heartbeat per member would
// keep druid busy for nothing.
func memberLeasePredicate(unknownThreshold time.Duration, now func() time.Time) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldLease, okOld := e.ObjectOld.(*coordinationv1.Lease)
			newLease, okNew := e.ObjectNew.(*coordinationv1.Lease)
			if !okOld || !okNew {
				return true
			}
			switch {
			case ptr.Deref(oldLease.Spec.HolderIdentity, "") != ptr.Deref(newLease.Spec.HolderIdentity, ""),
				oldLease.Annotations[druidv1alpha1.TLSEnabledAnnotation] != newLease.Annotations[druidv1alpha1.TLSEnabledAnnotation],
				oldLease.Annotations[druidv1alpha1.AlarmsAnnotation] != newLease.Annotations[druidv1alpha1.AlarmsAnnotation],
				oldLease.Annotations[druidv1alpha1.NoSpaceCannotRecoverAnnotation] != newLease.Annotations[druidv1alpha1.NoSpaceCannotRecoverAnnotation],
				oldLease.Annotations[podwire.AnnotationNoLeader] != newLease.Annotations[podwire.AnnotationNoLeader],
				(oldLease.Spec.RenewTime == nil) != (newLease.Spec.RenewTime == nil):
				return true
			case oldLease.Spec.RenewTime != nil && newLease.Spec.RenewTime != nil:
				return !oldLease.Spec.RenewTime.Equal(newLease.Spec.RenewTime) && now().Sub(oldLease.Spec.RenewTime.Time) > unknownThreshold
			default:
				return false
			}
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// podPredicate lets through pod creation, deletion and readiness changes.
func podPredicate() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldPod, okOld := e.ObjectOld.(*corev1.Pod)
			newPod, okNew := e.ObjectNew.(*corev1.Pod)
			if !okOld || !okNew {
				return true
			}
			return health.PodReady(oldPod) != health.PodReady(newPod)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
