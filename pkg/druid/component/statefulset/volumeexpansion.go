package statefulset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Reasons of the events of a volume expansion.
const (
	// EventReasonVolumeExpansionRequested: druid raised a member PVC's request to spec.storageCapacity.
	EventReasonVolumeExpansionRequested = "VolumeExpansionRequested"
	// EventReasonVolumeExpansionRefused: the apiserver refused the larger request, because the PVC's
	// StorageClass does not allow volume expansion or druid may not patch PVCs; the message says which.
	EventReasonVolumeExpansionRefused = "VolumeExpansionRefused"
)

// expandVolumes raises the storage request of every member's PVC that asks for less than
// spec.storageCapacity, so that a larger capacity reaches the running members: the StatefulSet's claim
// template is immutable, and Kubernetes never resizes the PVCs a StatefulSet already created. The storage
// provider then grows the volume, online where it can; the pods keep running. Only bound claims are
// raised (the apiserver refuses it on pending ones); a claim provisioned later from the old template is
// raised by the next sync. Volumes never shrink: a smaller capacity leaves every claim as it is.
func (o *operator) expandVolumes(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) ([]Event, error) {
	if etcd.Spec.StorageCapacity == nil || len(sts.Spec.VolumeClaimTemplates) != 1 {
		return nil, nil
	}
	want := *etcd.Spec.StorageCapacity
	var events []Event
	for ordinal := range ptr.Deref(sts.Spec.Replicas, 0) {
		pvc, err := o.memberClaim(ctx, etcd, sts, ordinal)
		if err != nil {
			return events, component.WrapError(err, component.OperationSync, kind, "reading the PVC of member %d", ordinal)
		}
		if pvc == nil || pvc.Status.Phase != corev1.ClaimBound {
			continue
		}
		requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if requested.Cmp(want) >= 0 {
			continue
		}
		patch := client.MergeFrom(pvc.DeepCopy())
		if pvc.Spec.Resources.Requests == nil {
			pvc.Spec.Resources.Requests = corev1.ResourceList{}
		}
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = want
		err = o.client.Patch(ctx, pvc, patch)
		switch {
		case err == nil:
			events = append(events, Event{Reason: EventReasonVolumeExpansionRequested,
				Message: fmt.Sprintf("PVC %s: storage request raised from %s to %s (spec.storageCapacity)", pvc.Name, requested.String(), want.String())})
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			events = append(events, Event{Warning: true, Reason: EventReasonVolumeExpansionRefused,
				Message: fmt.Sprintf("PVC %s stays at %s although spec.storageCapacity asks for %s: %v", pvc.Name, requested.String(), want.String(), err)})
		default:
			return events, component.WrapError(err, component.OperationSync, kind, "raising the storage request of PVC %s", pvc.Name)
		}
	}
	return events, nil
}

// memberClaim reads the data PVC of the member with ordinal (nil when there is none yet). A StatefulSet
// labels its PVCs with its selector, so with druid's selector they are in druid's cache; one that kept an
// older selector (an adopted StatefulSet) made PVCs without druid's label, which are read from the
// apiserver.
func (o *operator) memberClaim(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, ordinal int32) (*corev1.PersistentVolumeClaim, error) {
	key := client.ObjectKey{Namespace: sts.Namespace, Name: fmt.Sprintf("%s-%s-%d", sts.Spec.VolumeClaimTemplates[0].Name, sts.Name, ordinal)}
	var reader client.Reader = o.client.Client
	if sel := sts.Spec.Selector; o.client.Live != nil && (sel == nil || !hasLabels(sel.MatchLabels, druidv1alpha1.ManagedLabels(etcd))) {
		reader = o.client.Live
	}
	pvc := &corev1.PersistentVolumeClaim{}
	err := reader.Get(ctx, key, pvc)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return pvc, err
}
