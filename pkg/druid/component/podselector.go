package component

import (
	"context"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// LegacySelector is the StatefulSet selector of etcd-druid releases before v0.22 (and of its chart before
// that): `instance: <n>`, `name: etcd`. Later releases select with ManagedLabels; the selector is
// immutable, so a StatefulSet they adopted from an older release may still carry it.
func LegacySelector(etcd *druidv1alpha1.Etcd) map[string]string {
	return druidv1alpha1.LegacyMemberLabels(etcd)
}

// PodSelector returns the labels that select the Etcd's member pods now: the selector of an existing
// StatefulSet whose (immutable) selector is not ManagedLabels, else ManagedLabels. Every pod of a
// StatefulSet carries its selector's labels, while pods an upstream druid started may lack ours until they
// are rolled; the Services, the PodDisruptionBudget and the NetworkPolicy select with PodSelector so that
// they never lose the running members while a StatefulSet is adopted. A StatefulSet being deleted (the
// orphaning step of the adoption, whose pods already carry ManagedLabels) counts as none.
func PodSelector(ctx context.Context, c Clients, etcd *druidv1alpha1.Etcd) (map[string]string, error) {
	sts, err := ExistingStatefulSet(ctx, c, etcd)
	if err != nil || sts == nil || sts.DeletionTimestamp != nil || sts.Spec.Selector == nil {
		return druidv1alpha1.ManagedLabels(etcd), err
	}
	sel := sts.Spec.Selector
	if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) == 0 || maps.Equal(sel.MatchLabels, druidv1alpha1.ManagedLabels(etcd)) {
		return druidv1alpha1.ManagedLabels(etcd), nil
	}
	log.FromContext(ctx).Info("Adoption: selecting the members with the StatefulSet's own selector until it is recreated",
		"etcd", client.ObjectKeyFromObject(etcd), "selector", sel.MatchLabels)
	return maps.Clone(sel.MatchLabels), nil
}

// ExistingStatefulSet reads the Etcd's StatefulSet through the cache and, on a miss, from the apiserver: a
// StatefulSet an upstream druid created may lack the managed-by label the cache selects on. An Etcd that no
// druid has reconciled yet (no observedGeneration) has no such StatefulSet, and a new Etcd's objects are
// created without reads the apiserver answers with 404. nil when it does not exist.
func ExistingStatefulSet(ctx context.Context, c Clients, etcd *druidv1alpha1.Etcd) (*appsv1.StatefulSet, error) {
	key := client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}
	sts := &appsv1.StatefulSet{}
	err := c.Get(ctx, key, sts)
	if apierrors.IsNotFound(err) && c.Live != nil && etcd.Status.ObservedGeneration != nil {
		err = c.Live.Get(ctx, key, sts)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return sts, nil
}
