package memberconfig

import (
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// TestExistingClusterMembersAreNotTheEtcdsOwn: in druid's template of a prefixed Etcd that joins an
// existing cluster, the Etcd's own members (keyed by pod) get the prefix and make the cluster size; the
// source members keep the names the source cluster gives them, are not counted as the Etcd's own, and
// follow them in the initial-cluster each member is served.
func TestExistingClusterMembersAreNotTheEtcdsOwn(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(2, false, "shoot")
	e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
		Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0.etcd-old-peer.shoot--p--s.svc:2380"}}},
		ClientEndpoints: []string{"http://etcd-old-client.shoot--p--s.svc:2379"},
	}
	tmpl := rendered(t, e)

	own, err := tmpl.InitialCluster()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(own.String()).To(Equal("shoot-etcd-main-0=" + peerURL("etcd-main-0") + ",shoot-etcd-main-1=" + peerURL("etcd-main-1")))
	existing, err := tmpl.ExistingCluster()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(existing.String()).To(Equal("etcd-old-0=http://etcd-old-0.etcd-old-peer.shoot--p--s.svc:2380"))

	cfg, err := Resolve(tmpl, "etcd-main-1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Member.Name).To(Equal("shoot-etcd-main-1"))
	g.Expect(cfg.InitialCluster()).To(Equal(own.String() + "," + existing.String()))
	g.Expect(loadInEtcd(t, cfg).Validate()).To(Succeed())
}

// TestTemplateWithoutSourceHasNoExistingCluster: every other template (also the previous format, whose
// initial-cluster names no pod) has no existing cluster.
func TestTemplateWithoutSourceHasNoExistingCluster(t *testing.T) {
	g := NewWithT(t)
	for _, tmpl := range []Template{rendered(t, newEtcd(3, false, "")), previousFormat(t, newEtcd(3, false, "shoot"))} {
		existing, err := tmpl.ExistingCluster()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(existing).To(BeEmpty())
		own, err := tmpl.InitialCluster()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(own).To(HaveLen(3))
	}
}
