package statefulset

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// readStatefulSet returns etcd's StatefulSet as written.
func readStatefulSet(ctx context.Context, g *WithT, c client.Client, etcd *druidv1alpha1.Etcd) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts)).To(Succeed())
	return sts
}

// TestSyncUsesTheRenderingHandedOver shows that a spec run renders the pod template once: SyncPlanned
// writes the template handed over for the same Etcd object instead of rendering it again (a marker
// that only the handed-over rendering carries reaches the StatefulSet), and renders anew for any other
// object.
func TestSyncUsesTheRenderingHandedOver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	images := config.Images{EtcdWrapper: "e", BackupRestore: "b"}
	c := fake.NewClientBuilder().Build()
	op := New(component.Clients{Client: c, Live: c}, images, config.LocalBackup{})
	etcd := newEtcd()

	rendered, err := Render(ctx, c, images, config.LocalBackup{}, etcd)
	g.Expect(err).NotTo(HaveOccurred())
	rendered.template.Annotations["test/rendered-by"] = "the spec flow"
	rendered.Checksum = "handed-over"
	synced, err := op.(PlannedSyncer).SyncPlanned(ctx, etcd, rendered, nil)
	g.Expect(err).NotTo(HaveOccurred())
	sts := readStatefulSet(ctx, g, c, etcd)
	g.Expect(synced.StatefulSet.ResourceVersion).To(Equal(sts.ResourceVersion), "SyncPlanned returns the StatefulSet as written")
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue("test/rendered-by", "the spec flow"), "Sync rendered the template again")
	g.Expect(sts.Annotations).To(HaveKeyWithValue(PodTemplateChecksumAnnotation, "handed-over"))

	// Another object (even of the same Etcd) does not take a rendering made for a different one.
	_, err = op.(PlannedSyncer).SyncPlanned(ctx, etcd.DeepCopy(), rendered, nil)
	g.Expect(err).NotTo(HaveOccurred())
	sts = readStatefulSet(ctx, g, c, etcd)
	g.Expect(sts.Spec.Template.Annotations).NotTo(HaveKey("test/rendered-by"))
	fresh, err := Render(ctx, c, images, config.LocalBackup{}, etcd)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sts.Annotations).To(HaveKeyWithValue(PodTemplateChecksumAnnotation, fresh.Checksum))
}
