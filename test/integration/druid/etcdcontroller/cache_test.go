package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// managedObjects are the objects druid creates for etcd-main with one member and a backup store.
func managedObjects() []struct {
	name string
	obj  client.Object
} {
	return []struct {
		name string
		obj  client.Object
	}{
		{"etcd-main", &corev1.ServiceAccount{}},
		{"druid.gardener.cloud:etcd:etcd-main", &rbacv1.Role{}},
		{"druid.gardener.cloud:etcd:etcd-main", &rbacv1.RoleBinding{}},
		{"etcd-main-0", &coordinationv1.Lease{}},
		{"etcd-main-full-snap", &coordinationv1.Lease{}},
		{"etcd-main", &policyv1.PodDisruptionBudget{}},
		{"etcd-main-client", &corev1.Service{}},
		{"etcd-main-peer", &corev1.Service{}},
		{"etcd-main-config", &corev1.ConfigMap{}},
		{"etcd-main", &appsv1.StatefulSet{}},
	}
}

// druid's cache holds only objects labelled managed-by=etcd-druid. An object druid manages that lost the
// label is invisible to the cache, but the next spec reconcile still syncs it: the create fails with
// AlreadyExists, and the object is read from the apiserver and patched, which brings the label back.
func TestObjectsThatLostDruidsLabelAreSyncedAgain(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 1, withS3Store)
	waitReconciled(t, ns)

	unlabel := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":null}}}`))
	for _, m := range managedObjects() {
		g.Expect(exists(ns, m.name, m.obj)()).To(Succeed(), m.name)
		g.Expect(env.Client.Patch(ctx, m.obj, unlabel)).To(Succeed(), m.name)
		g.Expect(m.obj.GetLabels()).NotTo(HaveKey(druidv1alpha1.LabelManagedByKey), m.name)
	}

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
	g.Eventually(func(g Gomega) {
		e := getEtcd(g, ns)
		g.Expect(e.Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation), "the spec reconcile finished")
		g.Expect(e.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateSucceeded), "%+v %+v", e.Status.LastOperation, e.Status.LastErrors)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for _, m := range managedObjects() {
		g.Expect(exists(ns, m.name, m.obj)()).To(Succeed(), m.name)
		g.Expect(m.obj.GetLabels()).To(HaveKeyWithValue(druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue), "%T %s", m.obj, m.name)
	}
}

// A new Etcd's objects are created after a look into druid's cache only: no read of an object that does
// not exist yet reaches the apiserver (which would answer 404).
func TestCreationReadsNothingMissingFromTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	before := notFoundGets(g)
	createEtcd(t, ns, 1, withS3Store)
	waitReconciled(t, ns)
	after := notFoundGets(g)
	for _, resource := range []string{"serviceaccounts", "roles", "rolebindings", "leases", "poddisruptionbudgets", "services", "configmaps", "statefulsets", "secrets"} {
		g.Expect(after[resource]-before[resource]).To(BeZero(), "GET %s answered 404", resource)
	}
}

// notFoundGets are the apiserver's GET requests answered 404 so far, by resource.
func notFoundGets(g Gomega) map[string]float64 {
	families, err := env.APIServerMetrics(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	counts := map[string]float64{}
	family := families["apiserver_request_total"]
	g.Expect(family).NotTo(BeNil())
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == "GET" && labels["code"] == "404" {
			counts[labels["resource"]] += m.GetCounter().GetValue()
		}
	}
	return counts
}
