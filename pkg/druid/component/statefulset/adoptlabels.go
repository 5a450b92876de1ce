package statefulset

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// LabelAdopter is the part of the StatefulSet operator the spec flow's adoption step labels through: a
// StatefulSet an upstream etcd-druid before v0.22 created carries `instance`/`name` only, so druid's cache
// (which selects on the managed-by label) sees neither it nor its pods.
type LabelAdopter interface {
	// Unlabelled returns the StatefulSet when the apiserver has it but druid's cache does not, i.e. it
	// lacks druid's labels; nil otherwise. Once it is labelled this costs one cached read.
	Unlabelled(ctx context.Context, etcd *druidv1alpha1.Etcd) (*appsv1.StatefulSet, error)
	// AdoptPodLabels adds the managed labels to the member pods sts selects and controls (by UID): the pods
	// keep running, and the status flow sees them before the adoption rolls them. A pod that only carries
	// the selector's labels under a member's name is left alone: labelling it would make druid itself
	// promote a stranger to a member. It returns the pods it labelled.
	AdoptPodLabels(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) ([]string, error)
	// AdoptStatefulSetLabels puts druid's labels and owner reference on sts (metadata only); it tells
	// whether it patched.
	AdoptStatefulSetLabels(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) (bool, error)
}

var _ LabelAdopter = &operator{}

func (o *operator) Unlabelled(ctx context.Context, etcd *druidv1alpha1.Etcd) (*appsv1.StatefulSet, error) {
	key := client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}
	sts := &appsv1.StatefulSet{}
	if err := o.client.Get(ctx, key, sts); !apierrors.IsNotFound(err) {
		return nil, err // labelled already (or a read error)
	}
	if err := o.client.Live.Get(ctx, key, sts); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return sts, nil
}

func (o *operator) AdoptPodLabels(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) ([]string, error) {
	if sts.Spec.Selector == nil || len(sts.Spec.Selector.MatchLabels) == 0 {
		return nil, nil
	}
	pods := &corev1.PodList{}
	if err := o.client.Live.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels)); err != nil {
		return nil, fmt.Errorf("listing the pods of statefulset %s: %w", sts.Name, err)
	}
	var adopted []string
	for i := range pods.Items {
		pod := &pods.Items[i]
		if _, member := druidv1alpha1.PodOrdinalOf(etcd, pod.Name); !member || !health.OwnedByStatefulSet(pod, sts) {
			continue
		}
		base := pod.DeepCopy()
		labels := maps.Clone(pod.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, druidv1alpha1.ManagedLabels(etcd))
		if maps.Equal(labels, pod.Labels) {
			continue
		}
		pod.Labels = labels
		if err := o.client.Patch(ctx, pod, client.MergeFrom(base)); err != nil {
			return adopted, fmt.Errorf("labelling pod %s: %w", pod.Name, err)
		}
		adopted = append(adopted, pod.Name)
	}
	return adopted, nil
}

func (o *operator) AdoptStatefulSetLabels(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) (bool, error) {
	return component.AdoptMeta(ctx, o.client, sts, etcd, druidv1alpha1.ComponentStatefulSet)
}
