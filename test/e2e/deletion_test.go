//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario 8: deleting the Etcds (botanist Destroy) removes every object druid made for them and the
// finalizers it put on the referenced secrets. The PVCs stay, as the reference says (data survives an
// accidental deletion); deleting the namespace, as Gardener does, removes them and their volumes. That the
// seed itself tears down clean is asserted by AfterSuite.
var _ = Describe("deletion", func() {
	It("removes every object druid made when the Etcds are destroyed", func(ctx SpecContext) {
		env := newShoot(ctx, "deletion", 0)
		_, err := seedworkflow.DeployEtcds(ctx, env)
		Expect(err).NotTo(HaveOccurred())
		before := druidObjects(ctx, env)
		for _, kind := range []string{"StatefulSet", "Service", "ConfigMap", "Lease", "ServiceAccount", "Role", "RoleBinding", "PodDisruptionBudget"} {
			Expect(before).To(HaveKey(kind), "druid made no %s", kind)
		}
		fmt.Fprintf(GinkgoWriter, "druid's objects before the deletion: %v\n", before)
		Expect(secretsWithDruidFinalizer(ctx, env)).NotTo(BeEmpty(), "druid protects no referenced secret")
		claims := &corev1.PersistentVolumeClaimList{}
		Expect(env.Client.List(ctx, claims, client.InNamespace(env.Namespace))).To(Succeed())
		Expect(claims.Items).To(HaveLen(2))
		var volumeDirs []string
		for _, pvc := range claims.Items {
			pv := &corev1.PersistentVolume{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
			volumeDirs = append(volumeDirs, pv.Spec.Local.Path)
		}

		measure("destroy etcd-main and etcd-events", func() {
			for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
				Expect(seedworkflow.Component(env, role).Destroy(ctx)).To(Succeed())
			}
			for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
				Expect(seedworkflow.Component(env, role).WaitCleanup(ctx)).To(Succeed())
			}
		})
		Expect(druidObjects(ctx, env)).To(BeEmpty(), "objects druid made are left")
		Expect(secretsWithDruidFinalizer(ctx, env)).To(BeEmpty(), "secrets still carry druid's finalizer")
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(env.Client.List(ctx, pods, client.InNamespace(env.Namespace))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		Expect(env.Client.List(ctx, claims, client.InNamespace(env.Namespace))).To(Succeed())
		Expect(claims.Items).To(HaveLen(2), "the members' PVCs stay after the Etcds are deleted")

		measure("delete the shoot namespace", func() {
			removeShoot(ctx, env)
			Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: env.Namespace}, &corev1.Namespace{}))
			}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeTrue(), "namespace %s is not gone", env.Namespace)
			for _, dir := range volumeDirs {
				Eventually(func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) }).
					WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeTrue(), "volume directory %s is left", dir)
			}
		})
	})
})

// druidObjects lists the objects in the shoot namespace that carry druid's managed-by label, by kind, except
// pods already being deleted.
func druidObjects(ctx context.Context, env *seedworkflow.Env) map[string][]string {
	lists := map[string]client.ObjectList{
		"StatefulSet": &appsv1.StatefulSetList{}, "Service": &corev1.ServiceList{}, "ConfigMap": &corev1.ConfigMapList{},
		"Lease": &coordinationv1.LeaseList{}, "ServiceAccount": &corev1.ServiceAccountList{}, "Role": &rbacv1.RoleList{},
		"RoleBinding": &rbacv1.RoleBindingList{}, "PodDisruptionBudget": &policyv1.PodDisruptionBudgetList{},
		"Job": &batchv1.JobList{}, "Pod": &corev1.PodList{},
	}
	out := map[string][]string{}
	for kind, list := range lists {
		Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace),
			client.MatchingLabels{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue})).To(Succeed())
		items, err := meta.ExtractList(list)
		Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			obj := item.(client.Object)
			// A pod whose deletion a kubelet has yet to confirm (its containers are stopping gracefully) is
			// on its way out; the test waits for the pods to be gone separately.
			if kind == "Pod" && obj.GetDeletionTimestamp() != nil {
				continue
			}
			out[kind] = append(out[kind], obj.GetName())
		}
	}
	return out
}

// secretsWithDruidFinalizer names the secrets of the namespace that druid's secret controller protects.
func secretsWithDruidFinalizer(ctx context.Context, env *seedworkflow.Env) []string {
	secrets := &corev1.SecretList{}
	Expect(env.Client.List(ctx, secrets, client.InNamespace(env.Namespace))).To(Succeed())
	var names []string
	for _, s := range secrets.Items {
		for _, f := range s.Finalizers {
			if f == druidv1alpha1.FinalizerName {
				names = append(names, s.Name)
			}
		}
	}
	return names
}
