package etcd

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// EventReasonAdoptedLabels is a Normal event: druid labelled the objects a deployed etcd-druid left without
// its labels, so that its cache, status flow and rolling-update gate see them.
const EventReasonAdoptedLabels = "AdoptedDeployedObjects"

// EventReasonStatefulSetFieldKept is a Warning event: an adopted StatefulSet keeps an immutable field druid
// would set otherwise (statefulset.Synced.Notices names it and why).
const EventReasonStatefulSetFieldKept = "StatefulSetFieldKept"

// adoptLabels puts druid's labels and owner reference on the member leases, snapshot leases, member pods
// and the StatefulSet of an Etcd that a deployed etcd-druid before v0.22 reconciled (its objects carry
// `instance`/`name` only). druid's cache selects on the managed-by label: without it the status flow
// finds no member, reports AllMembersReady False, and the rolling-update gate then holds back the very
// spec sync that would label them. Only metadata is patched: nothing restarts. The StatefulSet is labelled
// last, so that a failure retries everything; once it is labelled (in the cache) this costs one cached
// read. An Etcd no druid has reconciled yet (no observedGeneration) has nothing to adopt.
func (r *Reconciler) adoptLabels(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	if etcd.Status.ObservedGeneration == nil {
		return nil
	}
	key := client.ObjectKey{Namespace: etcd.Namespace, Name: etcd.StatefulSetName()}
	sts := &appsv1.StatefulSet{}
	if err := r.client.Get(ctx, key, sts); !apierrors.IsNotFound(err) {
		return err // labelled already (or a read error)
	}
	if err := r.reader.Get(ctx, key, sts); err != nil {
		return client.IgnoreNotFound(err)
	}

	var adopted []string
	patch := func(obj client.Object, componentName string) error {
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		base := obj.DeepCopyObject().(client.Object)
		component.ApplyManagedMeta(obj, etcd, componentName)
		if equality.Semantic.DeepEqual(base.GetLabels(), obj.GetLabels()) && equality.Semantic.DeepEqual(base.GetOwnerReferences(), obj.GetOwnerReferences()) {
			return nil
		}
		if err := r.client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("labelling %s: %w", obj.GetName(), err)
		}
		adopted = append(adopted, obj.GetName())
		return nil
	}
	members := max(int(etcd.Spec.Replicas), int(ptr.Deref(sts.Spec.Replicas, 0)))
	for i := 0; i < members; i++ {
		if err := patch(leaseNamed(etcd, etcd.MemberLeaseName(i)), druidv1alpha1.ComponentMemberLease); err != nil {
			return err
		}
	}
	for _, name := range []string{etcd.FullSnapshotLeaseName(), etcd.DeltaSnapshotLeaseName()} {
		if err := patch(leaseNamed(etcd, name), druidv1alpha1.ComponentSnapshotLease); err != nil {
			return err
		}
	}
	if err := r.labelPods(ctx, etcd, sts, &adopted); err != nil {
		return err
	}
	if err := patch(sts, druidv1alpha1.ComponentStatefulSet); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Adoption: labelled the objects of the deployed etcd-druid", "objects", adopted)
	r.recorder.Eventf(etcd, nil, corev1.EventTypeNormal, EventReasonAdoptedLabels, actionReconcile,
		"put druid's labels on the objects of the deployed etcd-druid (metadata only, nothing restarts): %v", adopted)
	return nil
}

// labelPods adds ManagedLabels to the pods sts selects: the pods keep running, and the status flow sees
// them before the adoption rolls them.
func (r *Reconciler) labelPods(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, adopted *[]string) error {
	if sts.Spec.Selector == nil || len(sts.Spec.Selector.MatchLabels) == 0 {
		return nil
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels)); err != nil {
		return fmt.Errorf("listing the pods of statefulset %s: %w", sts.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if _, member := etcd.PodOrdinalOf(pod.Name); !member {
			continue
		}
		base := pod.DeepCopy()
		labels := maps.Clone(pod.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, etcd.ManagedLabels())
		if maps.Equal(labels, pod.Labels) {
			continue
		}
		pod.Labels = labels
		if err := r.client.Patch(ctx, pod, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("labelling pod %s: %w", pod.Name, err)
		}
		*adopted = append(*adopted, pod.Name)
	}
	return nil
}

func leaseNamed(etcd *druidv1alpha1.Etcd, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: etcd.Namespace, Name: name}}
}
