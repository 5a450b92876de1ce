// Package poddisruptionbudget manages the PodDisruptionBudget `<n>` that keeps voluntary evictions (node
// drains, cluster-autoscaler) from taking away the quorum of an etcd cluster.
package poddisruptionbudget

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindPodDisruptionBudget

type operator struct {
	client       client.Client
	minAvailable MinAvailablePolicy
}

// Option configures the operator.
type Option func(*operator)

// WithMinAvailablePolicy replaces the default QuorumPolicy, e.g. with Seed002Policy once the status flow
// keeps the AllMembersReady and BackupReady conditions current.
func WithMinAvailablePolicy(policy MinAvailablePolicy) Option {
	return func(o *operator) { o.minAvailable = policy }
}

// New returns the PodDisruptionBudget operator; without options minAvailable follows QuorumPolicy.
func New(c client.Client, opts ...Option) component.Operator {
	o := &operator{client: c, minAvailable: QuorumPolicy}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func emptyPDB(etcd *druidv1alpha1.Etcd) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: etcd.PDBName(), Namespace: etcd.Namespace}}
}

// Sync creates or patches the PDB. With the Etcd annotation
// resources.druid.gardener.cloud/allow-unhealthy-pod-eviction the PDB lets unhealthy pods be evicted
// (AlwaysAllow), so that a crash-looping member cannot block a node drain forever.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	pdb := emptyPDB(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, pdb, func() error {
		component.ApplyManagedMeta(pdb, etcd, druidv1alpha1.ComponentPDB)
		pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(o.minAvailable(etcd)))
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: etcd.ManagedLabels()}
		pdb.Spec.UnhealthyPodEvictionPolicy = nil
		if metav1.HasAnnotation(etcd.ObjectMeta, druidv1alpha1.AllowUnhealthyPodEvictionAnnotation) {
			pdb.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
		}
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing pod disruption budget %s", pdb.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced pod disruption budget", "etcd", client.ObjectKeyFromObject(etcd),
		"minAvailable", pdb.Spec.MinAvailable.IntValue(), "result", result)
	return nil
}

// TriggerDelete deletes the PDB.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	pdb := emptyPDB(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, pdb),
		component.OperationDelete, kind, "deleting pod disruption budget %s", pdb.Name)
}

// GetExistingResourceNames returns the PDB's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyPDB(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting pod disruption budget")
}
