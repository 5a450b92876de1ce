package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Deleting an Etcd deletes every component and then removes the finalizer. envtest has no garbage
// collector, so everything that disappears was deleted by the controller.
func TestDeletionRemovesEverythingAndTheFinalizer(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 3, withS3Store)
	etcd := waitReconciled(t, ns)
	g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).To(Succeed())

	g.Expect(env.Client.Delete(ctx, etcd)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), &druidv1alpha1.Etcd{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "the finalizer is removed")

	for name, obj := range map[string]client.Object{
		"sts etcd-main":    &appsv1.StatefulSet{},
		"sa etcd-main":     &corev1.ServiceAccount{},
		"pdb etcd-main":    &policyv1.PodDisruptionBudget{},
		"role":             &rbacv1.Role{},
		"rolebinding":      &rbacv1.RoleBinding{},
		"etcd-main-config": &corev1.ConfigMap{},
		"etcd-main-client": &corev1.Service{},
		"etcd-main-peer":   &corev1.Service{},
	} {
		key := map[string]string{"sts etcd-main": etcdName, "sa etcd-main": etcdName, "pdb etcd-main": etcdName,
			"role": "druid.gardener.cloud:etcd:etcd-main", "rolebinding": "druid.gardener.cloud:etcd:etcd-main"}[name]
		if key == "" {
			key = name
		}
		g.Expect(apierrors.IsNotFound(exists(ns, key, obj)())).To(BeTrue(), name)
	}
	leases := &coordinationv1.LeaseList{}
	g.Expect(env.Client.List(ctx, leases, client.InNamespace(ns))).To(Succeed())
	g.Expect(leases.Items).To(BeEmpty(), "member and snapshot leases are deleted")
}
