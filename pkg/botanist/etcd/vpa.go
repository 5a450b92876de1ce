package etcd

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpaautoscalingv1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// vpaRoleLabelPrefix names a VPA's role label value, etcd-vpa-<role>, as Gardener labels it.
const vpaRoleLabelPrefix = "etcd-vpa-"

// emptyVPA is the VerticalPodAutoscaler of this etcd, named like the Etcd.
func (e *etcd) emptyVPA() *vpaautoscalingv1.VerticalPodAutoscaler {
	return &vpaautoscalingv1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: e.name(), Namespace: e.namespace}}
}

// reconcileVPA writes the VerticalPodAutoscaler of the etcd the way gardenlet does. It targets the Etcd,
// whose scale subresource gives the VPA the members' selector (druid writes status.selector), so it follows
// the Etcd whatever druid names the StatefulSet. Update mode InPlaceOrRecreate: the VPA resizes a member in
// place where the kubelet can and evicts it (within druid's PodDisruptionBudget) otherwise; a
// recommendation changes neither the Etcd nor the StatefulSet. Only the etcd container is scaled, requests
// only (no limit ever appears), from the floor (etcdFloor); every other container keeps the requests the
// Etcd gives it. The eviction requirement tells Gardener's eviction-requirements controller when the VPA
// may evict to scale down (downscaleRestriction).
func (e *etcd) reconcileVPA(ctx context.Context) error {
	vpa := e.emptyVPA()
	_, err := controllerutil.CreateOrUpdate(ctx, e.client, vpa, func() error {
		metav1.SetMetaDataLabel(&vpa.ObjectMeta, labelRole, vpaRoleLabelPrefix+e.values.Role)
		e.setEvictionRequirement(vpa)
		vpa.Spec = vpaautoscalingv1.VerticalPodAutoscalerSpec{
			TargetRef: &autoscalingv1.CrossVersionObjectReference{
				APIVersion: druidv1alpha1.SchemeGroupVersion.String(),
				Kind:       "Etcd",
				Name:       e.name(),
			},
			UpdatePolicy: &vpaautoscalingv1.PodUpdatePolicy{UpdateMode: ptr.To(vpaautoscalingv1.UpdateModeInPlaceOrRecreate)},
			ResourcePolicy: &vpaautoscalingv1.PodResourcePolicy{ContainerPolicies: []vpaautoscalingv1.ContainerResourcePolicy{
				{
					ContainerName:    etcdpod.ContainerEtcd,
					Mode:             ptr.To(vpaautoscalingv1.ContainerScalingModeAuto),
					MinAllowed:       e.etcdFloor(),
					ControlledValues: ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly),
				},
				{
					ContainerName: vpaautoscalingv1.DefaultContainerResourcePolicy,
					Mode:          ptr.To(vpaautoscalingv1.ContainerScalingModeOff),
				},
			}},
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing VerticalPodAutoscaler %s/%s: %w", e.namespace, e.name(), err)
	}
	return nil
}

// setEvictionRequirement labels the VPA for Gardener's eviction-requirements controller and says when it
// may evict to scale down; the maintenance window goes with the in-window restriction only.
func (e *etcd) setEvictionRequirement(vpa *vpaautoscalingv1.VerticalPodAutoscaler) {
	restriction := e.values.downscaleRestriction()
	metav1.SetMetaDataLabel(&vpa.ObjectMeta, labelVPAEvictionRequirements, evictionRequirementManagedByController)
	metav1.SetMetaDataAnnotation(&vpa.ObjectMeta, annotationVPADownscaleRestriction, restriction)
	if restriction != downscaleInMaintenanceWindowOnly {
		delete(vpa.Annotations, annotationShootMaintenanceWindow)
		return
	}
	window := DefaultMaintenanceWindow
	if e.values.MaintenanceWindow != nil {
		window = *e.values.MaintenanceWindow
	}
	metav1.SetMetaDataAnnotation(&vpa.ObjectMeta, annotationShootMaintenanceWindow, window.Begin+","+window.End)
}

// deleteVPA deletes the VerticalPodAutoscaler; a cluster without the VPA API has none to delete.
func (e *etcd) deleteVPA(ctx context.Context) error {
	err := e.client.Delete(ctx, e.emptyVPA())
	if err == nil || meta.IsNoMatchError(err) {
		return nil
	}
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting VerticalPodAutoscaler %s/%s: %w", e.namespace, e.name(), err)
	}
	return nil
}
