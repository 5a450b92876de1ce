package seedworkflow

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Labels and names gardenlet gives a shoot's control-plane namespace and its Cluster resource.
const (
	labelGardenRole     = "gardener.cloud/role"
	gardenRoleShoot     = "shoot"
	clusterAPIVersion   = "extensions.gardener.cloud/v1alpha1"
	clusterKind         = "Cluster"
	hostAccessPolicy    = "allow-from-seed-host"
	shootNetworkNodes   = "10.0.0.0/16"
	shootNetworkPods    = "10.3.0.0/16"
	shootNetworkService = "10.4.0.0/16"
)

// ensureShootNamespace creates the shoot's control-plane namespace as gardenlet does: labelled
// `gardener.cloud/role: shoot` (which Gardener's NetworkPolicy controllers select) and with a Cluster
// resource where the seed serves that API (gardenlet's NetworkPolicy controller reads the shoot's networks
// from it). On a seed that enforces NetworkPolicies it also lets the host reach the etcd pods.
func ensureShootNamespace(ctx context.Context, env *Env) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: env.Namespace, Labels: map[string]string{labelGardenRole: gardenRoleShoot}}}
	err := env.Client.Create(ctx, ns)
	switch {
	case apierrors.IsAlreadyExists(err):
		// A namespace of an earlier run gets the label too: without it no Gardener policy applies there.
		existing := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ns), existing); err != nil {
			return fmt.Errorf("reading namespace %s: %w", env.Namespace, err)
		}
		if existing.Labels[labelGardenRole] != gardenRoleShoot {
			patch := client.MergeFrom(existing.DeepCopy())
			metav1.SetMetaDataLabel(&existing.ObjectMeta, labelGardenRole, gardenRoleShoot)
			if err := env.Client.Patch(ctx, existing, patch); err != nil {
				return fmt.Errorf("labelling namespace %s: %w", env.Namespace, err)
			}
		}
	case err != nil:
		return fmt.Errorf("creating namespace %s: %w", env.Namespace, err)
	}
	if err := ensureCluster(ctx, env); err != nil {
		return err
	}
	if env.Seed.EnforcesNetworkPolicies() {
		return ensureHostAccess(ctx, env)
	}
	return nil
}

// ensureCluster writes the shoot's Cluster with the shoot's networks (made up, outside the seed's), as far as
// the seed serves the Cluster API (Gardener's extension CRDs; the local seed installs them with its
// NetworkPolicy controllers).
func ensureCluster(ctx context.Context, env *Env) error {
	gardenerObject := func(kind string) map[string]any {
		return map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": kind}
	}
	shoot := gardenerObject("Shoot")
	shoot["metadata"] = map[string]any{"name": env.ShootName(), "namespace": "garden-local"}
	shoot["spec"] = map[string]any{"networking": map[string]any{"type": "local", "ipFamilies": []any{"IPv4"},
		"nodes": shootNetworkNodes, "pods": shootNetworkPods, "services": shootNetworkService}}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"shoot": shoot, "seed": gardenerObject("Seed"), "cloudProfile": gardenerObject("CloudProfile")},
	}}
	cluster.SetAPIVersion(clusterAPIVersion)
	cluster.SetKind(clusterKind)
	cluster.SetName(env.Namespace)
	err := env.Client.Create(ctx, cluster)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err), meta.IsNoMatchError(err):
		return nil
	default:
		return fmt.Errorf("creating Cluster %s: %w", env.Namespace, err)
	}
}

// ensureHostAccess lets the host reach the client and backup-restore ports of the etcd members (druid's
// pods, by the label every druid gives them): the writers, the checks and Gardener's Snapshot of the e2e suite
// and the demo run on the host, in place of kube-apiserver and gardenlet, which a Gardener seed admits by their
// pod labels. Other pods of the namespace stay closed to the host.
func ensureHostAccess(ctx context.Context, env *Env) error {
	port := func(p int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(p))}
	}
	policy := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: hostAccessPolicy, Namespace: env.Namespace},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: env.Seed.BridgeIP() + "/32"}}},
				Ports: []networkingv1.NetworkPolicyPort{port(etcdpod.DefaultClientPort), port(etcdpod.DefaultBackupPort)},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if err := env.Client.Create(ctx, policy); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating NetworkPolicy %s/%s: %w", env.Namespace, hostAccessPolicy, err)
	}
	return nil
}
