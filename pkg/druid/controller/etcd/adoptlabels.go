package etcd

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
)

// EventReasonAdoptedLabels is a Normal event: druid labelled the objects an upstream etcd-druid left without
// its labels, so that its cache, status flow and pod update see them.
const EventReasonAdoptedLabels = "AdoptedDeployedObjects"

// EventReasonStatefulSetFieldKept is a Warning event: an adopted StatefulSet keeps an immutable field druid
// would set otherwise (statefulset.Synced.Notices names it and why).
const EventReasonStatefulSetFieldKept = "StatefulSetFieldKept"

// adoptStep is the spec flow's first step; a reconcile without a spec run runs it alone, because the
// status flow needs it as much: it puts druid's labels and owner reference on the member leases, snapshot
// leases, member pods and the StatefulSet of an Etcd that an upstream etcd-druid before v0.22 reconciled
// (its objects carry `instance`/`name` only), through their operators. druid's cache selects on the
// managed-by label: without it the status flow finds no member and reports AllMembersReady False, and
// the heal flow and the pod update see no pods. Only metadata is patched:
// nothing restarts. The StatefulSet is labelled last, so that a failure retries everything. A failure
// does not stop the flow: it is logged and retried with the next reconcile. An Etcd no druid has
// reconciled yet (no observedGeneration) has nothing to adopt.
func (r *Reconciler) adoptStep(etcd *druidv1alpha1.Etcd) flow.Step {
	return flow.Step{Name: "adoptUpstreamObjects", Run: func(ctx context.Context) flow.Result {
		if err := r.adoptLabels(ctx, etcd); err != nil {
			log.FromContext(ctx).Error(err, "Adoption: labelling the objects of the upstream etcd-druid failed, retried with the next reconcile")
		}
		return flow.Continue()
	}}
}

func (r *Reconciler) adoptLabels(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	if etcd.Status.ObservedGeneration == nil {
		return nil
	}
	stsOperator := r.registry.Get(component.KindStatefulSet).(statefulset.LabelAdopter)
	sts, err := stsOperator.Unlabelled(ctx, etcd)
	if err != nil || sts == nil {
		return err
	}
	var adopted []string
	for _, kind := range []component.Kind{component.KindMemberLease, component.KindSnapshotLease} {
		names, err := r.registry.Get(kind).(component.LabelAdopter).AdoptLabels(ctx, etcd)
		adopted = append(adopted, names...)
		if err != nil {
			return err
		}
	}
	pods, err := stsOperator.AdoptPodLabels(ctx, etcd, sts)
	adopted = append(adopted, pods...)
	if err != nil {
		return err
	}
	patched, err := stsOperator.AdoptStatefulSetLabels(ctx, etcd, sts)
	if err != nil {
		return err
	}
	if patched {
		adopted = append(adopted, sts.Name)
	}
	log.FromContext(ctx).Info("Adoption: labelled the objects of the upstream etcd-druid", "objects", adopted)
	r.recorder.Eventf(etcd, nil, corev1.EventTypeNormal, EventReasonAdoptedLabels, actionReconcile,
		"put druid's labels on the objects of the upstream etcd-druid (metadata only, nothing restarts): %v", adopted)
	return nil
}
