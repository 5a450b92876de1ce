package statefulset

import (
	"context"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Events of adopting a StatefulSet an upstream etcd-druid created (docs/compatibility.md, "Adopting a
// landscape's objects"). The spec flow records them on the Etcd.
const (
	// EventReasonAdoptionWaiting: the StatefulSet must be recreated (an immutable field differs) and waits
	// until its members run the pod template that carries druid's labels.
	EventReasonAdoptionWaiting = "StatefulSetAdoptionWaiting"
	// EventReasonAdoptionRecreating: the StatefulSet was deleted with its pods and PVCs orphaned; the next
	// sync creates it again, and it takes the running pods over without restarting them.
	EventReasonAdoptionRecreating = "StatefulSetAdoptionRecreating"
)

// adoptionPollPeriod is how often a sync looks again while an adoption waits for a rollout or a deletion.
const adoptionPollPeriod = 5 * time.Second

// carriedLabels are the labels the pod template carries besides the rendered ones, so that a StatefulSet a
// upstream druid created can be patched and later recreated without another roll:
//   - the labels of an existing StatefulSet's own selector: the selector is immutable, and the apiserver
//     refuses a template that it does not select;
//   - LegacySelector's labels while the template has them and the rendered template is unchanged: the
//     StatefulSet recreated by the adoption keeps the template its pods run (dropped at the next roll);
//   - on creation, LegacySelector's labels when member pods carry them: the pods the orphaning left
//     behind are taken over with the template they run.
func (o *operator) carriedLabels(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, checksum string) (map[string]string, error) {
	legacy := component.LegacySelector(etcd)
	if !sts.CreationTimestamp.IsZero() {
		if sel := sts.Spec.Selector; sel != nil && !maps.Equal(sel.MatchLabels, druidv1alpha1.ManagedLabels(etcd)) {
			return maps.Clone(sel.MatchLabels), nil
		}
		if sts.Annotations[PodTemplateChecksumAnnotation] == checksum && hasLabels(sts.Spec.Template.Labels, legacy) {
			return legacy, nil
		}
		return nil, nil
	}
	pods := &corev1.PodList{}
	selector := druidv1alpha1.ManagedLabels(etcd)
	maps.Copy(selector, legacy)
	if err := o.client.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(selector), client.Limit(1)); err != nil {
		return nil, fmt.Errorf("listing the member pods: %w", err)
	}
	if len(pods.Items) > 0 {
		return legacy, nil
	}
	return nil, nil
}

// withLabels returns template with labels added (the rendered ones win on a conflict).
func withLabels(template corev1.PodTemplateSpec, carried map[string]string) corev1.PodTemplateSpec {
	if len(carried) == 0 {
		return template
	}
	out := *template.DeepCopy()
	merged := maps.Clone(carried)
	maps.Copy(merged, out.Labels)
	out.Labels = merged
	return out
}

// withClaimName returns template with its data volume mounts renamed to the claim template of an existing
// StatefulSet when that is not the one the Etcd names: the containers must mount the volume the (kept)
// claim template provides, or the apiserver refuses the template.
func withClaimName(template corev1.PodTemplateSpec, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) corev1.PodTemplateSpec {
	if sts.CreationTimestamp.IsZero() || len(sts.Spec.VolumeClaimTemplates) != 1 {
		return template
	}
	existing, rendered := sts.Spec.VolumeClaimTemplates[0].Name, druidv1alpha1.VolumeClaimTemplateName(etcd)
	if existing == rendered {
		return template
	}
	out := *template.DeepCopy()
	for i := range out.Spec.Containers {
		for j := range out.Spec.Containers[i].VolumeMounts {
			if m := &out.Spec.Containers[i].VolumeMounts[j]; m.Name == rendered {
				m.Name = existing
			}
		}
	}
	return out
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// checkSelects refuses an existing StatefulSet whose selector does not select the template druid would
// write (a selector with expressions druid cannot satisfy): the patch would fail on every sync.
func checkSelects(sts *appsv1.StatefulSet, template corev1.PodTemplateSpec) error {
	if sts.CreationTimestamp.IsZero() || sts.Spec.Selector == nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return fmt.Errorf("cannot adopt StatefulSet %s/%s: field spec.selector: %w", sts.Namespace, sts.Name, err)
	}
	if !selector.Matches(labels.Set(template.Labels)) {
		return fmt.Errorf("cannot adopt StatefulSet %s/%s: field spec.selector %q (immutable) does not select the pod template druid renders",
			sts.Namespace, sts.Name, selector.String())
	}
	return nil
}

// immutableDiffs compares the immutable fields of an existing StatefulSet with what druid would create.
// recreate names those the adoption changes by recreating it: LegacySelector as selector (the upstream
// druid migrates it the same way) and a podManagementPolicy other than Parallel (the members of a
// multi-node cluster must start together). kept names those it keeps, with why: another selector,
// serviceName, and volumeClaimTemplates (the PVCs are found by their name); a StatefulSet whose
// volumeClaimTemplates differ is never recreated, so that no member comes up on a new, empty volume.
func immutableDiffs(sts *appsv1.StatefulSet, etcd *druidv1alpha1.Etcd) (recreate []string, kept []string) {
	if sts.CreationTimestamp.IsZero() {
		return nil, nil
	}
	if sel := sts.Spec.Selector; sel != nil && !maps.Equal(sel.MatchLabels, druidv1alpha1.ManagedLabels(etcd)) {
		if len(sel.MatchExpressions) == 0 && maps.Equal(sel.MatchLabels, component.LegacySelector(etcd)) {
			recreate = append(recreate, "spec.selector instance/name of etcd-druid before v0.22")
		} else {
			kept = append(kept, fmt.Sprintf("spec.selector %v kept: druid knows no safe migration from it; the pods carry its labels", metav1.FormatLabelSelector(sel)))
		}
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		recreate = append(recreate, fmt.Sprintf("spec.podManagementPolicy %q", sts.Spec.PodManagementPolicy))
	}
	if sts.Spec.ServiceName != druidv1alpha1.PeerServiceName(etcd) {
		kept = append(kept, fmt.Sprintf("spec.serviceName %q kept: the members' DNS names follow it, while their peer URLs name %q", sts.Spec.ServiceName, druidv1alpha1.PeerServiceName(etcd)))
	}
	var claims []string
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		claims = append(claims, vct.Name)
	}
	if len(claims) != 1 || claims[0] != druidv1alpha1.VolumeClaimTemplateName(etcd) {
		kept = append(kept, fmt.Sprintf("spec.volumeClaimTemplates %v kept: the members' PVCs are named after them (the Etcd asks for %q)", claims, druidv1alpha1.VolumeClaimTemplateName(etcd)))
		if len(recreate) > 0 {
			kept = append(kept, fmt.Sprintf("not recreated for %v: a new StatefulSet would claim new, empty volumes", recreate))
			recreate = nil
		}
	}
	return recreate, kept
}

// smallerClaimTemplate names a claim template that asks for less storage than spec.storageCapacity: the
// running members' PVCs are raised in place (expandVolumes), and the StatefulSet is created again with the
// larger template so that members added later get the capacity from the start. That recreation is taken
// only when the StatefulSet is rolled out anyway (claimTemplateRecreation): unlike an adoption it must not
// hold up a spec run, e.g. one whose new template is to fix a crash-looping member.
func smallerClaimTemplate(sts *appsv1.StatefulSet, etcd *druidv1alpha1.Etcd) string {
	if len(sts.Spec.VolumeClaimTemplates) != 1 || etcd.Spec.StorageCapacity == nil {
		return ""
	}
	have, ok := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok || have.Cmp(*etcd.Spec.StorageCapacity) >= 0 {
		return ""
	}
	return fmt.Sprintf("spec.volumeClaimTemplates storage %s, below spec.storageCapacity %s", have.String(), etcd.Spec.StorageCapacity.String())
}

// claimTemplateRecreation is the reason to recreate sts for a larger claim template, or "" when there is
// none or sts is not rolled out (the next spec run looks again; claims added meanwhile are raised by
// expandVolumes).
func claimTemplateRecreation(sts *appsv1.StatefulSet, etcd *druidv1alpha1.Etcd) string {
	if reason := smallerClaimTemplate(sts, etcd); reason != "" && rolledOut(sts) {
		return reason
	}
	return ""
}

// rolledOut tells whether every member runs the StatefulSet's current template and is ready. Under
// updateStrategy OnDelete the StatefulSet controller before Kubernetes v1.37 never moves currentRevision to
// the update revision; there the replica counts decide alone.
func rolledOut(sts *appsv1.StatefulSet) bool {
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	st := sts.Status
	if st.ObservedGeneration < sts.Generation || st.UpdatedReplicas != replicas || st.ReadyReplicas < replicas {
		return false
	}
	if sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return st.Replicas == replicas
	}
	return replicas == 0 || st.UpdateRevision == st.CurrentRevision
}

// recreate deletes sts with propagationPolicy Orphan once its members run a template with druid's labels,
// so that the next sync creates it with druid's selector and takes the pods over; pods and PVCs are never
// deleted. It always returns a RequeueError: the adoption goes on in a later sync.
func (o *operator) recreate(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, reason string) error {
	logger := log.FromContext(ctx).WithValues("statefulset", client.ObjectKeyFromObject(sts), "reason", reason)
	if !rolledOut(sts) {
		logger.Info("Adoption: StatefulSet waits for its rolling update before it is recreated")
		return component.RequeueWithEvent(adoptionPollPeriod, EventReasonAdoptionWaiting,
			"StatefulSet %s must be recreated (%s): waiting until every member runs the pod template with druid's labels", sts.Name, reason)
	}
	reader := o.client.Live
	if reader == nil {
		reader = o.client.Client
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(sts.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels)); err != nil {
		return component.WrapError(err, component.OperationSync, kind, "listing the pods of statefulset %s", sts.Name)
	}
	for _, pod := range pods.Items {
		if !hasLabels(pod.Labels, druidv1alpha1.ManagedLabels(etcd)) {
			logger.Info("Adoption: a pod lacks druid's labels, StatefulSet not recreated yet", "pod", pod.Name)
			return component.RequeueWithEvent(adoptionPollPeriod, EventReasonAdoptionWaiting,
				"StatefulSet %s must be recreated (%s): waiting until pod %s carries druid's labels", sts.Name, reason, pod.Name)
		}
	}
	err := o.client.Delete(ctx, sts, client.PropagationPolicy(metav1.DeletePropagationOrphan), client.Preconditions{UID: ptr.To(sts.UID)})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "deleting statefulset %s with its pods orphaned", sts.Name)
	}
	logger.Info("Adoption: StatefulSet deleted with its pods and PVCs orphaned, to be recreated", "pods", len(pods.Items))
	return component.RequeueWithEvent(adoptionPollPeriod, EventReasonAdoptionRecreating,
		"deleted StatefulSet %s with propagationPolicy Orphan (its %d pods and their PVCs stay) to recreate it: %s", sts.Name, len(pods.Items), reason)
}
