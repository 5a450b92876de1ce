package etcd

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Observe reads everything the status is derived from: the StatefulSet, its pods (those it controls, and
// uncontrolled pods named as members: health.MemberPods), the member and snapshot
// leases and the warning events of the data volumes, all from the cache. The status flow observes once
// per reconcile; the heal flow acts on the same observation. synced is the StatefulSet as the spec flow of
// the same reconcile wrote it (nil without one), taken when the cache has not seen that write yet.
func (r *Reconciler) Observe(ctx context.Context, etcd *druidv1alpha1.Etcd, synced *appsv1.StatefulSet) (health.Observed, error) {
	o := health.Observed{Etcd: druidv1alpha1.Defaulted(etcd), Pods: map[string]*corev1.Pod{}}
	sts := &appsv1.StatefulSet{}
	switch err := r.client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts); {
	case err == nil:
		o.StatefulSet = sts
	case !apierrors.IsNotFound(err):
		return o, fmt.Errorf("reading statefulset: %w", err)
	}
	o.StatefulSet = statefulset.Newer(o.StatefulSet, synced)

	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(druidv1alpha1.ManagedLabels(etcd))); err != nil {
		return o, fmt.Errorf("listing pods: %w", err)
	}
	members, strangers := health.MemberPods(pods.Items, etcd, o.StatefulSet)
	if len(strangers) > 0 {
		log.FromContext(ctx).Info("Ignoring pods with the member labels that another controller than the Etcd's StatefulSet controls, or that are not named as members", "pods", strangers)
	}
	o.Pods = members

	leases := &coordinationv1.LeaseList{}
	if err := r.client.List(ctx, leases, client.InNamespace(etcd.Namespace), memberlease.Selector(etcd)); err != nil {
		return o, fmt.Errorf("listing member leases: %w", err)
	}
	o.MemberLeases = leases.Items
	o.ClusterSize = health.RecordedClusterSize(etcd, o.StatefulSet, o.MemberLeases)

	if etcd.Spec.Backup.Store != nil {
		var err error
		if o.SnapshotLeases.Full, err = r.optionalLease(ctx, etcd.Namespace, druidv1alpha1.FullSnapshotLeaseName(etcd)); err != nil {
			return o, err
		}
		if o.SnapshotLeases.Delta, err = r.optionalLease(ctx, etcd.Namespace, druidv1alpha1.DeltaSnapshotLeaseName(etcd)); err != nil {
			return o, err
		}
	}

	warnings, err := r.dataVolumeWarnings(ctx, o.Etcd, o.StatefulSet)
	if err != nil {
		return o, err
	}
	o.DataVolumeWarnings = warnings
	return o, nil
}

func (r *Reconciler) optionalLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading lease %s: %w", name, err)
	}
	return lease, nil
}

// dataVolumeWarnings returns "<pvc>: <reason>: <message>" for every Warning event on the PVCs of the
// StatefulSet's members (`<claim template>-<statefulset>-<ordinal>`). Events come from the cache, whose
// event informer holds only warnings about PVCs (CacheOptions): the status flow runs for every Etcd every
// StatusSyncPeriod, and a list from the apiserver each time would cost it a request per Etcd and period.
// Events expire with the apiserver's event TTL, which bounds how long an old warning is reported.
func (r *Reconciler) dataVolumeWarnings(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) ([]string, error) {
	if sts == nil || sts.Spec.Replicas == nil || *sts.Spec.Replicas == 0 {
		return nil, nil
	}
	claims := map[string]bool{}
	for i := 0; i < int(*sts.Spec.Replicas); i++ {
		claims[fmt.Sprintf("%s-%s-%d", druidv1alpha1.VolumeClaimTemplateName(etcd), sts.Name, i)] = true
	}
	list := &corev1.EventList{}
	err := r.client.List(ctx, list, client.InNamespace(etcd.Namespace))
	if err != nil {
		return nil, fmt.Errorf("listing events of the data volumes: %w", err)
	}
	var warnings []string
	for _, e := range list.Items {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == "PersistentVolumeClaim" && claims[e.InvolvedObject.Name] {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s", e.InvolvedObject.Name, e.Reason, e.Message))
		}
	}
	sort.Strings(warnings)
	return warnings, nil
}
