// Package poddisruptionbudget manages the PodDisruptionBudget `<n>` that keeps voluntary evictions (node
// drains, cluster-autoscaler) from taking away the quorum of an etcd cluster.
package poddisruptionbudget

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Option configures the operator.
type Option func(*options)

type options struct {
	minAvailable MinAvailablePolicy
}

// WithMinAvailablePolicy replaces the default QuorumPolicy, e.g. with DecisionTablePolicy once the status flow
// keeps the AllMembersReady and BackupReady conditions current.
func WithMinAvailablePolicy(policy MinAvailablePolicy) Option {
	return func(o *options) { o.minAvailable = policy }
}

// New returns the PodDisruptionBudget operator; without options minAvailable follows QuorumPolicy. With the
// Etcd annotation resources.druid.gardener.cloud/allow-unhealthy-pod-eviction the PDB lets unhealthy pods be
// evicted (AlwaysAllow), so that a crash-looping member cannot block a node drain forever.
func New(c component.Clients, opts ...Option) component.Operator {
	o := &options{minAvailable: QuorumPolicy}
	for _, opt := range opts {
		opt(o)
	}
	return &component.SingleObject[*policyv1.PodDisruptionBudget]{
		Client:    c,
		Kind:      component.KindPodDisruptionBudget,
		Component: druidv1alpha1.ComponentPDB,
		Empty: func(etcd *druidv1alpha1.Etcd) *policyv1.PodDisruptionBudget {
			return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PDBName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(ctx context.Context, etcd *druidv1alpha1.Etcd, pdb *policyv1.PodDisruptionBudget) error {
			pods, err := component.PodSelector(ctx, c, etcd)
			if err != nil {
				return err
			}
			pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(o.minAvailable(etcd)))
			pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: pods}
			pdb.Spec.UnhealthyPodEvictionPolicy = nil
			if metav1.HasAnnotation(etcd.ObjectMeta, druidv1alpha1.AllowUnhealthyPodEvictionAnnotation) {
				pdb.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
			}
			return nil
		},
	}
}
