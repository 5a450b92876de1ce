package etcd

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpaautoscalingv1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// vpaRoleLabelPrefix names a VPA's role label value, etcd-vpa-<role>, as Gardener labels it.
const vpaRoleLabelPrefix = "etcd-vpa-"

// emptyVPA is the VerticalPodAutoscaler of this etcd, named like the Etcd and its StatefulSet.
func (e *etcd) emptyVPA() *vpaautoscalingv1.VerticalPodAutoscaler {
	return &vpaautoscalingv1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: e.name(), Namespace: e.namespace}}
}

// reconcileVPA writes the VerticalPodAutoscaler of the etcd's StatefulSet the way Gardener does: update mode
// Recreate (Gardener writes "Auto", which the VPA API deprecated as an alias of Recreate, the behaviour we
// keep, and will remove); the etcd container scaled (requests only, so no limit ever appears) from the class's floor
// (etcdRequestsByClass, which Deploy also writes as the initial requests); the backup-restore container
// left at its fixed requests (mode Off). A recommendation changes no Etcd and no StatefulSet: the VPA's
// updater evicts a member (within druid's PodDisruptionBudget) and its admission controller sets the
// requests of the pod that replaces it.
func (e *etcd) reconcileVPA(ctx context.Context) error {
	vpa := e.emptyVPA()
	_, err := controllerutil.CreateOrUpdate(ctx, e.client, vpa, func() error {
		metav1.SetMetaDataLabel(&vpa.ObjectMeta, labelRole, vpaRoleLabelPrefix+e.values.Role)
		vpa.Spec = vpaautoscalingv1.VerticalPodAutoscalerSpec{
			TargetRef: &autoscalingv1.CrossVersionObjectReference{
				APIVersion: appsv1.SchemeGroupVersion.String(),
				Kind:       "StatefulSet",
				Name:       e.name(),
			},
			UpdatePolicy: &vpaautoscalingv1.PodUpdatePolicy{UpdateMode: ptr.To(vpaautoscalingv1.UpdateModeRecreate)},
			ResourcePolicy: &vpaautoscalingv1.PodResourcePolicy{ContainerPolicies: []vpaautoscalingv1.ContainerResourcePolicy{
				{
					ContainerName:    etcdpod.ContainerEtcd,
					Mode:             ptr.To(vpaautoscalingv1.ContainerScalingModeAuto),
					MinAllowed:       e.etcdFloor(),
					ControlledValues: ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly),
				},
				{
					ContainerName:    etcdpod.ContainerBackupRestore,
					Mode:             ptr.To(vpaautoscalingv1.ContainerScalingModeOff),
					ControlledValues: ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly),
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
