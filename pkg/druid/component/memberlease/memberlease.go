// Package memberlease manages the member Leases `<n>-<i>` (one per member, `<prefix>-<n>-<i>` with
// spec.memberNamePrefix). Druid only creates them empty and removes those of members that no longer exist
// (Sync, and Healer for the heal flow); their holderIdentity, renewTime and the tls-enabled annotation
// belong to the member's sidecar, and the status flow reads member health from them.
package memberlease

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindMemberLease

type operator struct {
	client component.Clients
}

// New returns the member Lease operator.
func New(c component.Clients) component.Operator {
	return &operator{client: c}
}

// Selector matches the member leases of an Etcd (and nothing else of it), for listing and deleting them.
func Selector(etcd *druidv1alpha1.Etcd) client.MatchingLabels {
	labels := druidv1alpha1.ManagedLabels(etcd)
	labels[druidv1alpha1.LabelComponentKey] = druidv1alpha1.ComponentMemberLease
	return labels
}

// Sync makes sure a lease exists for every ordinal below spec.replicas and deletes the leases of higher
// ordinals (scale-down, hibernation). During a scale-in the StatefulSet keeps its larger replica count
// until the members it drops have left the etcd membership, and their leases stay as long: their sidecars
// renew them, and the backup leader marks on them that the member left, which is what lets the scale-in
// proceed. The heal flow deletes them once the StatefulSet is down to spec.replicas (the heal decision table's case 12). Existing leases only get their labels and owner reference
// refreshed (and, once the Etcd joined an existing cluster, marked so: markJoinedExistingCluster): the
// spec and annotations written by the sidecar are never touched.
//
// A controller that must keep leases for fewer or more members than spec.replicas (e.g. during a staged
// scale-up) passes a copy of the Etcd with the replica count it wants.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	logger := log.FromContext(ctx).WithValues("etcd", client.ObjectKeyFromObject(etcd))
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		name := druidv1alpha1.MemberLeaseName(etcd, i)
		_, result, err := component.CreateOrPatch(ctx, o.client, func() *coordinationv1.Lease {
			return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace}}
		}, func(lease *coordinationv1.Lease) error {
			component.ApplyManagedMeta(lease, etcd, druidv1alpha1.ComponentMemberLease)
			markJoinedExistingCluster(lease, etcd)
			return nil
		})
		if err != nil {
			return component.WrapError(err, component.OperationSync, kind, "syncing member lease %s", name)
		}
		logger.V(1).Info("Synced member lease", "member", name, "result", result)
	}
	keep, err := o.replicasToKeep(ctx, etcd)
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "reading the statefulset's replicas")
	}
	superfluous, err := o.leasesAtOrAbove(ctx, etcd, keep)
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "listing member leases")
	}
	for _, lease := range superfluous {
		if err := component.DeleteIgnoringNotFound(ctx, o.client, lease); err != nil {
			return component.WrapError(err, component.OperationSync, kind, "deleting superfluous member lease %s", lease.Name)
		}
		logger.Info("Deleted member lease of a member beyond spec.replicas", "member", lease.Name)
	}
	return nil
}

// markJoinedExistingCluster sets JoinedExistingClusterAnnotation once status.bootstrapWithExistingCluster
// says the Etcd's members joined the existing cluster: from then on the sidecar of a member without data
// never takes a cluster answering at the source's endpoints for its own unless something of the Etcd's
// tells so (a recorded cluster ID, its own members' answers). Druid only ever adds the mark: the join
// happened, whatever the spec says later.
func markJoinedExistingCluster(lease *coordinationv1.Lease, etcd *druidv1alpha1.Etcd) {
	if etcd.Status.BootstrapWithExistingCluster != nil {
		metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.JoinedExistingClusterAnnotation, "true")
	}
}

// replicasToKeep is the number of leading ordinals whose leases stay: spec.replicas, or the StatefulSet's
// replicas while a scale-in holds it above them. Hibernation keeps none, as before: it removes no member.
func (o *operator) replicasToKeep(ctx context.Context, etcd *druidv1alpha1.Etcd) (int, error) {
	keep := int(etcd.Spec.Replicas)
	if keep == 0 {
		return 0, nil
	}
	sts := &appsv1.StatefulSet{}
	err := o.client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts)
	if apierrors.IsNotFound(err) {
		return keep, nil
	}
	if err != nil {
		return 0, err
	}
	return max(keep, int(ptr.Deref(sts.Spec.Replicas, 1))), nil
}

// leasesAtOrAbove lists the member leases whose ordinal is >= first. Leases whose name does not parse as
// one of this Etcd's members are left alone: druid only deletes what it can attribute.
func (o *operator) leasesAtOrAbove(ctx context.Context, etcd *druidv1alpha1.Etcd, first int) ([]*coordinationv1.Lease, error) {
	list := &coordinationv1.LeaseList{}
	if err := o.client.List(ctx, list, client.InNamespace(etcd.Namespace), Selector(etcd)); err != nil {
		return nil, err
	}
	var out []*coordinationv1.Lease
	for i := range list.Items {
		if ordinal, ok := druidv1alpha1.OrdinalOf(etcd, list.Items[i].Name); ok && ordinal >= first {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// TriggerDelete deletes every member lease of the Etcd.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	err := o.client.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(etcd.Namespace), Selector(etcd))
	return component.WrapError(err, component.OperationDelete, kind, "deleting member leases")
}

// GetExistingResourceNames lists the member leases of the Etcd.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("LeaseList"))
	if err := o.client.List(ctx, list, client.InNamespace(etcd.Namespace), Selector(etcd)); err != nil {
		return nil, component.WrapError(err, component.OperationGet, kind, "listing member leases")
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, item.Name)
	}
	return names, nil
}
