package component_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestTriggerDeleteRemovesEveryObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, withPeerTLS, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	})
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(resourceVersions(t, ns)).To(HaveLen(13))

	g.Expect(registry.TriggerDeleteAll(ctx, etcd)).To(Succeed())
	// Deletion is asynchronous in general (finalizers, foreground deletion): poll like the deletion flow does.
	g.Eventually(func(g Gomega) {
		for _, reg := range registry {
			names, err := reg.Operator.GetExistingResourceNames(ctx, etcd)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(names).To(BeEmpty(), "kind %s", reg.Kind)
		}
	}).Should(Succeed())
	g.Expect(resourceVersions(t, ns)).To(BeEmpty())

	g.Expect(registry.TriggerDeleteAll(ctx, etcd)).To(Succeed(), "deleting what is gone is not an error")
}
