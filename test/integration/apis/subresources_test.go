package apis

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// TestPrinterColumns asks the apiserver for the Table rendering `kubectl get etcd` shows and checks that
// upstream etcd-druid's columns are there and filled from the status (Ready is status.ready, Quorate the
// Ready condition's status).
func TestPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	now := metav1.Now()
	condition := func(typ druidv1alpha1.ConditionType, status druidv1alpha1.ConditionStatus, reason string) druidv1alpha1.Condition {
		return druidv1alpha1.Condition{Type: typ, Status: status, Reason: reason, Message: reason, LastTransitionTime: now, LastUpdateTime: now}
	}
	etcd.Status.Conditions = []druidv1alpha1.Condition{
		condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate),
		condition(druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady),
		condition(druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonBackupSucceeded),
	}
	etcd.Status.Ready = ptr.To(true)
	g.Expect(env.Client.Status().Update(ctx, etcd)).To(Succeed())

	clientset, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := clientset.RESTClient().Get().
		AbsPath("/apis/druid.gardener.cloud/v1alpha1/namespaces", etcd.Namespace, "etcds", etcd.Name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(raw, table)).To(Succeed())

	cells := map[string]any{}
	g.Expect(table.Rows).To(HaveLen(1))
	for i, column := range table.ColumnDefinitions {
		cells[column.Name] = table.Rows[0].Cells[i]
	}
	g.Expect(cells).To(HaveKeyWithValue("Name", etcd.Name))
	g.Expect(cells).To(HaveKeyWithValue("Ready", "true"))
	g.Expect(cells).To(HaveKeyWithValue("Quorate", "True"))
	g.Expect(cells).To(HaveKeyWithValue("All Members Ready", "False"))
	g.Expect(cells).To(HaveKeyWithValue("Backup Ready", "True"))
	g.Expect(cells).To(HaveKey("Age"))
	g.Expect(cells).To(HaveKeyWithValue("Cluster Size", BeNumerically("==", 3)))
}

// TestScaleSubresource drives spec.replicas through the scale subresource, as `kubectl scale` and
// autoscalers do, and reads status.replicas and status.selector back through it.
func TestScaleSubresource(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	etcd.Spec.Replicas = 1
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	selector := labels.SelectorFromSet(druidv1alpha1.ManagedLabels(etcd)).String()
	etcd.Status.Replicas = 1
	etcd.Status.Selector = ptr.To(selector)
	g.Expect(env.Client.Status().Update(ctx, etcd)).To(Succeed())

	scale := &autoscalingv1.Scale{}
	g.Expect(env.Client.SubResource("scale").Get(ctx, etcd, scale)).To(Succeed())
	g.Expect(scale.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(scale.Status.Replicas).To(Equal(int32(1)))
	g.Expect(scale.Status.Selector).To(Equal(selector))

	scale.Spec.Replicas = 3
	g.Expect(env.Client.SubResource("scale").Update(ctx, etcd, client.WithSubResourceBody(scale))).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
	g.Expect(etcd.Spec.Replicas).To(Equal(int32(3)))

	// The schema's rules hold for the scale subresource as well: a negative count is rejected. An even
	// count passes, as in upstream etcd-druid's CRD (the webhook only warns on the Etcd itself).
	g.Expect(env.Client.SubResource("scale").Get(ctx, etcd, scale)).To(Succeed())
	scale.Spec.Replicas = -1
	err := env.Client.SubResource("scale").Update(ctx, etcd, client.WithSubResourceBody(scale))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "scaling to -1 members is rejected, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.replicas"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
	g.Expect(etcd.Spec.Replicas).To(Equal(int32(3)))

	g.Expect(env.Client.SubResource("scale").Get(ctx, etcd, scale)).To(Succeed())
	scale.Spec.Replicas = 4
	g.Expect(env.Client.SubResource("scale").Update(ctx, etcd, client.WithSubResourceBody(scale))).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
	g.Expect(etcd.Spec.Replicas).To(Equal(int32(4)))
}
