package etcdcontroller_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/hostile"
)

// This suite registers no validation webhook, as gardenlet's deployment of druid registers none for Etcds:
// the apiserver stores whatever the CRD schema admits, and druid must refuse itself what the webhook would.

// TestReconcilerRefusesWhatTheWebhookRefuses sends every Etcd the validation webhook's sweep refuses
// (hostile.Etcds) straight to druid: none gets a StatefulSet, ConfigMap or client Service; each gets
// SpecValid=False/InvalidSpec and a Warning event naming the field. Rows the CRD schema already refuses
// are skipped (the apiserver stores nothing).
func TestReconcilerRefusesWhatTheWebhookRefuses(t *testing.T) {
	namespace := env.CreateNamespace(t)
	base, err := hostile.ExampleEtcd(namespace)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	created, err := hostile.CreateRefused(ctx, env.Client, hostile.Etcds, base.DeepCopy)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(len(created)).To(BeNumerically(">", 50), "most refused rows pass the CRD schema")

	for i, row := range hostile.Etcds {
		etcd, ok := created[i]
		if !ok {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			expectRefused(t, etcd, row.Want.RefusedAt)
			g := NewWithT(t)
			for name, obj := range map[string]client.Object{
				druidv1alpha1.StatefulSetName(etcd): &appsv1.StatefulSet{}, druidv1alpha1.ConfigMapName(etcd): &corev1.ConfigMap{}, druidv1alpha1.ClientServiceName(etcd): &corev1.Service{},
			} {
				err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s must not exist: %v", obj, name, err)
			}
		})
	}
}

// TestReconcilerRefusesUnsafeChangesOfARunningEtcd: a reconciled Etcd's spec is changed in a way the
// webhook refuses on update (an immutable field that renames the members or their volumes, a port clash);
// druid judges it against the spec it last applied (recorded on the StatefulSet), changes neither the
// StatefulSet nor the ConfigMap, and reports the field. Reverting the change reconciles again.
func TestReconcilerRefusesUnsafeChangesOfARunningEtcd(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*druidv1alpha1.Etcd)
		field  string
	}{
		"member name prefix added: renames every member": {func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("garden") }, "spec.memberNamePrefix"},
		"claim template renamed: new, empty volumes":     {func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("other-data") }, "spec.volumeClaimTemplate"},
		"storage class changed":                          {func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("fast") }, "spec.storageClass"},
		"client port onto the peer port":                 {func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientPort = ptr.To[int32](2380) }, "spec.etcd.clientPort"},
		"quota above the volume":                         {func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = qty("100Gi") }, "spec.etcd.quota"},
		"backup store prefix into another shoot's backups": {func(e *druidv1alpha1.Etcd) {
			withS3Store(e)
			e.Spec.Backup.Store.Prefix = "../shoot--other--b/etcd-main"
		}, "spec.backup.store.prefix"},
		"backup secret in another namespace (read by druid)": {func(e *druidv1alpha1.Etcd) { withS3Store(e); e.Spec.Backup.Store.SecretRef.Namespace = "garden" }, "spec.backup.store.secretRef.namespace"},
		"joining an existing cluster after creation": {func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
				Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0:2380"}}},
				ClientEndpoints: []string{"http://etcd-old-client:2379"},
			}
		}, "spec.etcd.bootstrapWithExistingCluster"},
		"storage capacity shrunk below the quota in the spec": {func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = qty("8Gi"); e.Spec.StorageCapacity = qty("1Gi") }, "spec.storageCapacity"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			namespace := env.CreateNamespace(t)
			createEtcd(t, namespace, 1, func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = qty("16Gi") })
			waitReconciled(t, namespace)
			var sts *appsv1.StatefulSet
			g.Eventually(func(g Gomega) {
				sts = statefulSet(g, namespace)
				g.Expect(sts.Annotations).To(HaveKey(etcdcontroller.AppliedSpecAnnotation), "druid records the spec it applied")
				// The status flow records the cluster size on its own schedule; the snapshot below is taken once
				// it did, so that only a write of the refused spec can change the annotations.
				g.Expect(sts.Annotations).To(HaveKey(druidv1alpha1.ClusterSizeAnnotation), "druid records the cluster size")
			}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
			cm := &corev1.ConfigMap{}
			g.Expect(exists(namespace, etcdName+"-config", cm)()).To(Succeed())

			if schemaRefuses(t, namespace, func(e *druidv1alpha1.Etcd) { tc.change(e); askForReconcile(e) }) {
				t.Skipf("the CRD schema refuses the change of %s; druid's own check is covered by the unit test of appliedEtcd", tc.field)
			}
			expectRefused(t, getEtcd(g, namespace), tc.field)
			g.Consistently(func(g Gomega) {
				now := statefulSet(g, namespace)
				g.Expect(now.Spec).To(Equal(sts.Spec), "the StatefulSet is left as it was")
				g.Expect(now.Annotations).To(Equal(sts.Annotations))
				nowCM := &corev1.ConfigMap{}
				g.Expect(exists(namespace, etcdName+"-config", nowCM)()).To(Succeed())
				g.Expect(nowCM.Data).To(Equal(cm.Data), "the ConfigMap is left as it was")
			}).WithTimeout(3 * testConfig.StatusSyncPeriod).WithPolling(poll).Should(Succeed())
			etcd := getEtcd(g, namespace)
			g.Expect(etcd.Status.ObservedGeneration).NotTo(Equal(ptr.To(etcd.Generation)))

			updateEtcd(t, namespace, func(e *druidv1alpha1.Etcd) {
				var applied druidv1alpha1.EtcdSpec
				NewWithT(t).Expect(json.Unmarshal([]byte(sts.Annotations[etcdcontroller.AppliedSpecAnnotation]), &applied)).To(Succeed())
				e.Spec = applied
				askForReconcile(e)
			})
			waitReconciled(t, namespace)
			expectCondition(t, namespace, etcdcontroller.ConditionTypeSpecValid, druidv1alpha1.ConditionTrue, etcdcontroller.ReasonSpecPassed)
		})
	}
}

// expectRefused waits for SpecValid=False/InvalidSpec naming fld and a Warning event InvalidSpec naming it,
// and checks that the generation was not reported reconciled.
func expectRefused(t *testing.T, etcd *druidv1alpha1.Etcd, fld string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := &druidv1alpha1.Etcd{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), got)).To(Succeed())
		c := druidv1alpha1.FindCondition(got.Status.Conditions, etcdcontroller.ConditionTypeSpecValid)
		g.Expect(c).NotTo(BeNil(), "condition SpecValid; lastOperation %+v", got.Status.LastOperation)
		g.Expect(string(c.Status) + "/" + c.Reason).To(Equal("False/" + etcdcontroller.ReasonInvalidSpec))
		g.Expect(c.Message).To(ContainSubstring(fld))
		g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("generation %d", got.Generation)))
		g.Expect(got.Status.ObservedGeneration).NotTo(Equal(ptr.To(got.Generation)))

		list := &corev1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(etcd.Namespace), client.MatchingFields{
			"involvedObject.kind": "Etcd", "involvedObject.name": etcd.Name, "type": corev1.EventTypeWarning, "reason": etcdcontroller.EventReasonInvalidSpec,
		})).To(Succeed())
		var messages []string
		for _, e := range list.Items {
			messages = append(messages, e.Message)
		}
		g.Expect(strings.Join(messages, "\n")).To(ContainSubstring(fld))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// schemaRefuses applies change to the stored Etcd (retrying on conflicts) and tells whether the apiserver
// refused it as invalid: our CRDs carry the immutability rules as CEL, so such a change never reaches druid.
func schemaRefuses(t *testing.T, namespace string, change func(*druidv1alpha1.Etcd)) bool {
	t.Helper()
	refused := false
	NewWithT(t).Eventually(func(g Gomega) {
		etcd := getEtcd(g, namespace)
		change(etcd)
		err := env.Client.Update(ctx, etcd)
		if apierrors.IsInvalid(err) {
			refused = true
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return refused
}

// askForReconcile sets the operation annotation, as Gardener does after changing an Etcd (the suite runs
// druid with auto-reconcile off, as gardenlet configures it).
func askForReconcile(e *druidv1alpha1.Etcd) {
	metav1.SetMetaDataAnnotation(&e.ObjectMeta, druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.OperationReconcile)
}

func qty(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
