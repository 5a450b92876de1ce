// Package role manages the Role `druid.gardener.cloud:etcd:<n>`: exactly the permissions the etcd pods'
// sidecars call the apiserver with and nothing more, so that a compromised etcd pod cannot touch anything
// else in the namespace.
package role

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// New returns the Role operator; rules added by hand are overwritten. images tells which sidecars are
// ours (OurRules) and which upstream's (UpstreamRules).
func New(c component.Clients, images config.Images) component.Operator {
	return &component.SingleObject[*rbacv1.Role]{
		Client:    c,
		Kind:      component.KindRole,
		Component: druidv1alpha1.ComponentRole,
		Empty: func(etcd *druidv1alpha1.Etcd) *rbacv1.Role {
			return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.RoleName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: desired(c, images),
	}
}

// desired sets OurRules while every sidecar of the Etcd that runs or is about to run is ours, and
// UpstreamRules while any is upstream's: the Etcd's image (also the one the compaction Jobs run, druid's
// configured image), the StatefulSet's template, or a pod not rolled yet. A move from upstream's images to
// ours thus narrows the Role only once the last upstream sidecar is gone, never under one that still runs.
func desired(c component.Clients, images config.Images) func(context.Context, *druidv1alpha1.Etcd, *rbacv1.Role) error {
	return func(ctx context.Context, etcd *druidv1alpha1.Etcd, role *rbacv1.Role) error {
		upstream, err := anyUpstreamSidecar(ctx, c, images, etcd)
		if err != nil {
			return err
		}
		if upstream {
			role.Rules = UpstreamRules()
		} else {
			role.Rules = OurRules()
		}
		return nil
	}
}

func anyUpstreamSidecar(ctx context.Context, c component.Clients, images config.Images, etcd *druidv1alpha1.Etcd) (bool, error) {
	isUpstream := func(image string) bool {
		return image != "" && images.Compatibility.KindOf(image) == imagecaps.Upstream
	}
	wanted := images.BackupRestore
	if etcd.Spec.Backup.Image != nil && *etcd.Spec.Backup.Image != "" {
		wanted = *etcd.Spec.Backup.Image
	}
	if isUpstream(wanted) || isUpstream(images.BackupRestore) {
		return true, nil
	}
	sts, err := component.ExistingStatefulSet(ctx, c, etcd)
	if err != nil {
		return false, fmt.Errorf("reading the statefulset: %w", err)
	}
	if sts != nil && isUpstream(sidecarImage(sts.Spec.Template.Spec)) {
		return true, nil
	}
	selector, err := component.PodSelector(ctx, c, etcd)
	if err != nil {
		return false, err
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(selector)); err != nil {
		return false, fmt.Errorf("listing the member pods: %w", err)
	}
	for i := range pods.Items {
		if isUpstream(sidecarImage(pods.Items[i].Spec)) {
			return true, nil
		}
	}
	return false, nil
}

func sidecarImage(spec corev1.PodSpec) string {
	for _, c := range spec.Containers {
		if c.Name == etcdpod.ContainerBackupRestore {
			return c.Image
		}
	}
	return ""
}

// OurRules are the calls of our sidecar (package backuprestore) and of `etcdbrctl compact`, which runs
// with the same service account: get and update of leases (the member leases it renews and marks
// tls-enabled, left-cluster or moved-aside; the snapshot leases; the other members' leases it reads at
// start-up and during a scale-in). It reads no StatefulSet or pod and never lists, watches or patches;
// the etcd wrapper calls no apiserver.
func OurRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{coordinationv1.GroupName},
		Resources: []string{"leases"},
		Verbs:     []string{"get", "update"},
	}}
}

// UpstreamRules are upstream etcd-druid's Role, which upstream's etcd-backup-restore is written against:
// leases and statefulsets get/list/patch/update/watch, pods get/list/watch.
func UpstreamRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			APIGroups: []string{coordinationv1.GroupName},
			Resources: []string{"leases"},
			Verbs:     []string{"get", "list", "patch", "update", "watch"},
		},
		{
			APIGroups: []string{appsv1.GroupName},
			Resources: []string{"statefulsets"},
			Verbs:     []string{"get", "list", "patch", "update", "watch"},
		},
		{
			APIGroups: []string{corev1.GroupName},
			Resources: []string{"pods"},
			Verbs:     []string{"get", "list", "watch"},
		},
	}
}
