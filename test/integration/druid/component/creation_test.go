package component_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

func TestSyncCreatesEveryObjectWithReferenceNamesLabelsAndOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--p--s/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("bucket")}
		e.Spec.Etcd.ClientService = &druidv1alpha1.ClientService{
			Annotations:         map[string]string{"networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports": "[]"},
			Labels:              map[string]string{"extra": "label"},
			TrafficDistribution: ptr.To("PreferClose"),
		}
		e.Annotations = map[string]string{druidv1alpha1.AllowUnhealthyPodEvictionAnnotation: ""}
	})
	registry, _ := newRegistry(t)

	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())

	sa := get(t, ns, "etcd-main", &corev1.ServiceAccount{})
	expectManaged(g, sa, etcd, "etcd-service-account")

	role := get(t, ns, "druid.gardener.cloud:etcd:etcd-main", &rbacv1.Role{}).(*rbacv1.Role)
	expectManaged(g, role, etcd, "etcd-role")
	// Our sidecar only gets and updates leases (upstream's sidecar gets upstream's Role, see package role).
	g.Expect(role.Rules).To(ConsistOf(
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}},
	))

	rb := get(t, ns, "druid.gardener.cloud:etcd:etcd-main", &rbacv1.RoleBinding{}).(*rbacv1.RoleBinding)
	expectManaged(g, rb, etcd, "etcd-role-binding")
	g.Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "druid.gardener.cloud:etcd:etcd-main"}))
	g.Expect(rb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "ServiceAccount", Name: "etcd-main", Namespace: ns}))

	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		lease := get(t, ns, name, &coordinationv1.Lease{}).(*coordinationv1.Lease)
		expectManaged(g, lease, etcd, "etcd-member-lease")
		g.Expect(lease.Spec.HolderIdentity).To(BeNil(), "druid creates member leases empty")
	}
	for _, name := range []string{"etcd-main-full-snap", "etcd-main-delta-snap"} {
		expectManaged(g, get(t, ns, name, &coordinationv1.Lease{}), etcd, "etcd-snapshot-lease")
	}

	pdb := get(t, ns, "etcd-main", &policyv1.PodDisruptionBudget{}).(*policyv1.PodDisruptionBudget)
	expectManaged(g, pdb, etcd, "etcd-pdb")
	g.Expect(pdb.Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(2))))
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}))
	g.Expect(pdb.Spec.UnhealthyPodEvictionPolicy).To(Equal(ptr.To(policyv1.AlwaysAllow)))

	client := get(t, ns, "etcd-main-client", &corev1.Service{}).(*corev1.Service)
	expectManaged(g, client, etcd, "etcd-client-service")
	g.Expect(client.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
	g.Expect(client.Spec.ClusterIP).NotTo(Equal(corev1.ClusterIPNone))
	g.Expect(client.Spec.Selector).To(Equal(druidv1alpha1.ManagedLabels(etcd)))
	g.Expect(servicePorts(client)).To(Equal(map[string]int32{"client": 2379, "server": 2380, "backuprestore": 8080}))
	g.Expect(client.Labels).To(HaveKeyWithValue("extra", "label"))
	g.Expect(client.Annotations).To(HaveKeyWithValue("networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports", "[]"))
	g.Expect(client.Spec.TrafficDistribution).To(Equal(ptr.To("PreferClose")))

	peer := get(t, ns, "etcd-main-peer", &corev1.Service{}).(*corev1.Service)
	expectManaged(g, peer, etcd, "etcd-peer-service")
	g.Expect(peer.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	g.Expect(peer.Spec.PublishNotReadyAddresses).To(BeTrue())
	g.Expect(peer.Spec.Selector).To(Equal(druidv1alpha1.ManagedLabels(etcd)))
	g.Expect(servicePorts(peer)).To(Equal(map[string]int32{"peer": 2380}))

	cm := get(t, ns, "etcd-main-config", &corev1.ConfigMap{}).(*corev1.ConfigMap)
	expectManaged(g, cm, etcd, "etcd-configmap")
	g.Expect(cm.Data).To(HaveKey("etcd.conf.yaml"))

	sts := get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
	expectManaged(g, sts, etcd, "etcd-statefulset")
	g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))

	for _, reg := range registry {
		names, err := reg.Operator.GetExistingResourceNames(ctx, etcd)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(names).NotTo(BeEmpty(), "kind %s", reg.Kind)
	}
}

func TestSecondSyncWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, withPeerTLS, withClientTLS, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
		e.Spec.Backup.FullSnapshotSchedule = ptr.To("0 */24 * * *")
		e.Spec.Etcd.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resourceMust("1Gi")}}
	})
	registry, counter := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	before := resourceVersions(t, ns)
	g.Expect(before).To(HaveLen(13)) // SA, Role, RoleBinding, 3 member + 2 snapshot leases, PDB, 2 Services, ConfigMap, StatefulSet
	expectResyncWritesNothing(t, registry, counter, etcd)
}

// expectResyncWritesNothing syncs etcd once more, with no spec change: no request writes, and no object of
// its namespace gets a new resource version.
func expectResyncWritesNothing(t *testing.T, registry component.Registry, counter *writeCounter, etcd *druidv1alpha1.Etcd) {
	t.Helper()
	g := NewWithT(t)
	before := resourceVersions(t, etcd.Namespace)
	counter.writes.Store(0)
	g.Expect(registry.SyncAll(context.Background(), etcd)).To(Succeed())
	g.Expect(counter.writes.Load()).To(BeZero(), "a second Sync without spec change must not write")
	g.Expect(resourceVersions(t, etcd.Namespace)).To(Equal(before))
}

func TestSyncFailureCarriesStableCode(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderLocal), SecretRef: &corev1.SecretReference{Name: "missing"}}
	})
	registry, _ := newRegistry(t)
	err := registry.SyncAll(context.Background(), etcd)
	g.Expect(err).To(HaveOccurred())
	g.Expect(component.AsLastError(err, time.Now()).Code).To(Equal(druidv1alpha1.ErrorCode("ERR_SYNC_STATEFULSET")))
	g.Expect(err.Error()).To(ContainSubstring("missing"))
}

func servicePorts(svc *corev1.Service) map[string]int32 {
	out := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		out[p.Name] = p.Port
		if p.TargetPort.IntVal != p.Port {
			out[p.Name+"-target-mismatch"] = p.TargetPort.IntVal
		}
	}
	return out
}

// resourceVersions maps kind/name of every druid-managed object in the namespace to its resourceVersion.
func resourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	selector := client.MatchingLabels{"app.kubernetes.io/managed-by": "etcd-druid"}
	lists := map[string]client.ObjectList{
		"ServiceAccount": &corev1.ServiceAccountList{}, "Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{},
		"Lease": &coordinationv1.LeaseList{}, "PodDisruptionBudget": &policyv1.PodDisruptionBudgetList{},
		"Service": &corev1.ServiceList{}, "ConfigMap": &corev1.ConfigMapList{}, "StatefulSet": &appsv1.StatefulSetList{},
	}
	for kind, list := range lists {
		NewWithT(t).Expect(env.Client.List(context.Background(), list, client.InNamespace(ns), selector)).To(Succeed())
		items, err := metaItems(list)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			out[kind+"/"+item.GetName()] = item.GetResourceVersion()
		}
	}
	return out
}
