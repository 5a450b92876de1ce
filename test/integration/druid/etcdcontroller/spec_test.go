package etcdcontroller_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// A new Etcd gets every component of the reference without any annotation, its finalizer and its
// observedGeneration.
func TestCreationProducesEveryComponent(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 3, withS3Store)

	etcd := waitReconciled(t, ns)
	g.Expect(etcd.Finalizers).To(ContainElement("druid.gardener.cloud/etcd-druid"))
	g.Expect(etcd.Status.LastOperation.Type).To(Equal(druidv1alpha1.LastOperationTypeCreate))
	g.Expect(etcd.Status.LastOperation.RunID).NotTo(BeEmpty())
	g.Expect(etcd.Status.LastErrors).To(BeEmpty())
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Status).To(Equal(druidv1alpha1.ConditionTrue))

	for name, obj := range map[string]client.Object{
		"etcd-main":                           &corev1.ServiceAccount{},
		"druid.gardener.cloud:etcd:etcd-main": &rbacv1.Role{},
		"etcd-main-0":                         &coordinationv1.Lease{},
		"etcd-main-1":                         &coordinationv1.Lease{},
		"etcd-main-2":                         &coordinationv1.Lease{},
		"etcd-main-full-snap":                 &coordinationv1.Lease{},
		"etcd-main-delta-snap":                &coordinationv1.Lease{},
		"etcd-main-client":                    &corev1.Service{},
		"etcd-main-peer":                      &corev1.Service{},
		"etcd-main-config":                    &corev1.ConfigMap{},
	} {
		g.Expect(exists(ns, name, obj)()).To(Succeed(), name)
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "etcd-druid"), name)
		g.Expect(obj.GetOwnerReferences()).To(ContainElement(HaveField("UID", etcd.UID)), name)
	}
	g.Expect(exists(ns, "druid.gardener.cloud:etcd:etcd-main", &rbacv1.RoleBinding{})()).To(Succeed())
	g.Expect(exists(ns, "etcd-main", &policyv1.PodDisruptionBudget{})()).To(Succeed())
	sts := statefulSet(g, ns)
	g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
	g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("example.org/etcd-wrapper:v1"))

	// The status flow runs too: no member has renewed its lease yet.
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNoMembersInStatus)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeBackupReady).Status).To(Equal(druidv1alpha1.ConditionUnknown))
	g.Expect(etcd.Status.Selector).To(Equal(ptr.To("app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=etcd-main")))
	g.Expect(etcd.Status.Etcd).NotTo(BeNil())
	g.Expect(etcd.Status.Etcd.Name).To(Equal("etcd-main"))
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))))
}

// A missing TLS secret key stops the spec flow before any component: no StatefulSet, SecretsReady=False
// naming the secret, lastErrors and a Warning event. Creating the secret converges without touching the
// Etcd (the Secret watch brings it back).
func TestMissingSecretBlocksStatefulSetUntilItAppears(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "ca-etcd", "bundle.crt")
	createSecret(t, ns, "etcd-client", "tls.crt", "tls.key")
	createEtcd(t, ns, 1, withClientTLS)

	etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message).To(ContainSubstring(ns + "/etcd-server"))
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message).To(ContainSubstring("spec.etcd.clientUrlTls.serverTLSSecretRef"))
	g.Expect(etcd.Status.LastErrors).To(ConsistOf(HaveField("Code", druidv1alpha1.ErrorCode("ERR_SECRETS_MISSING"))))
	g.Expect(etcd.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateError))
	g.Expect(etcd.Status.ObservedGeneration).To(BeNil())
	NewWithT(t).Eventually(func(g Gomega) []corev1.Event { return warningEvents(g, ns, etcdcontroller.EventReasonSecretsMissing) }).
		WithTimeout(timeout).WithPolling(poll).Should(ContainElement(HaveField("Message", ContainSubstring("etcd-server"))))
	NewWithT(t).Consistently(exists(ns, etcdName, &appsv1.StatefulSet{})).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Succeed())
	g.Expect(exists(ns, "etcd-main-config", &corev1.ConfigMap{})()).NotTo(Succeed(), "nothing is synced while secrets are missing")

	// A secret without the key still counts as missing, and says which key.
	createSecret(t, ns, "etcd-server", "tls.crt")
	NewWithT(t).Eventually(func(g Gomega) string {
		return druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainSubstring(`has no data for key(s) "tls.key"`))
	g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).NotTo(Succeed())

	before := getEtcd(g, ns)
	NewWithT(t).Eventually(func(g Gomega) {
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-server"}, secret)).To(Succeed())
		secret.Data["tls.key"] = []byte("key")
		g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())

	etcd = waitReconciled(t, ns)
	g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).To(Succeed())
	g.Expect(etcd.Status.LastErrors).To(BeEmpty())
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
	g.Expect(etcd.Generation).To(Equal(before.Generation), "the Etcd's spec was not touched")
	g.Expect(etcd.Annotations).To(Equal(before.Annotations), "nobody annotated the Etcd")
}

// With auto-reconcile off a spec change alone does nothing; the operation annotation triggers the spec
// reconcile and is removed only after observedGeneration was written.
func TestReconcileAnnotationContract(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 1)
	etcd := waitReconciled(t, ns)
	g.Expect(etcd.Status.ObservedGeneration).To(Equal(ptr.To(int64(1))))

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.StorageCapacity = ptr.To(resource.MustParse("20Gi"))
		e.Spec.Etcd.Quota = ptr.To(resource.MustParse("6Gi"))
	})
	NewWithT(t).Consistently(func(g Gomega) {
		e := getEtcd(g, ns)
		g.Expect(e.Generation).To(Equal(int64(2)))
		g.Expect(e.Status.ObservedGeneration).To(Equal(ptr.To(int64(1))))
		g.Expect(statefulSet(g, ns).Generation).To(Equal(int64(1)), "the StatefulSet is not rolled")
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	for _, key := range []string{druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.DruidOperationAnnotation} {
		t.Run(key, func(t *testing.T) {
			generation := getEtcd(NewWithT(t), ns).Generation
			if key == druidv1alpha1.DruidOperationAnnotation {
				updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = ptr.To(resource.MustParse("7Gi")) })
				generation++
			}
			updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
				if e.Annotations == nil {
					e.Annotations = map[string]string{}
				}
				e.Annotations[key] = druidv1alpha1.OperationReconcile
			})
			// Whenever the annotation is gone, observedGeneration must already be the new generation.
			NewWithT(t).Eventually(func(g Gomega) {
				e := getEtcd(g, ns)
				if _, annotated := e.Annotations[key]; !annotated {
					g.Expect(e.Status.ObservedGeneration).To(Equal(ptr.To(generation)), "annotation removed before observedGeneration was written")
					return
				}
				g.Expect(e.Annotations).NotTo(HaveKey(key))
			}).WithTimeout(timeout).WithPolling(20 * time.Millisecond).Should(Succeed())
			g := NewWithT(t)
			g.Expect(statefulSet(g, ns).Generation).To(BeNumerically(">", 1), "the StatefulSet got the new spec")
		})
	}
}

// The suspend annotation skips the spec flow with a Warning event; the status is still maintained.
func TestSuspendAnnotationSkipsSpecReconcile(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.SuspendEtcdSpecReconcileAnnotation: "true"}
	})
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNoMembersInStatus)
	g.Expect(etcd.Status.ObservedGeneration).To(BeNil())
	NewWithT(t).Eventually(func(g Gomega) []corev1.Event {
		return warningEvents(g, ns, etcdcontroller.EventReasonSpecReconcileSuspended)
	}).
		WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
	NewWithT(t).Consistently(exists(ns, etcdName, &appsv1.StatefulSet{})).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Succeed())

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) { delete(e.Annotations, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation) })
	waitReconciled(t, ns)
	g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).To(Succeed())
}
