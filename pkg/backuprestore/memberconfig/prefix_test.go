package memberconfig

import (
	"testing"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// peerURL and clientURL are the Service URLs druid renders for pod in the tests' namespace.
func peerURL(pod string) string   { return "http://" + pod + ".etcd-main-peer.shoot--p--s.svc:2380" }
func clientURL(pod string) string { return "http://" + pod + ".etcd-main-peer.shoot--p--s.svc:2379" }

// rendered is druid's template for e, parsed as the sidecar parses it.
func rendered(t *testing.T, e *druidv1alpha1.Etcd) Template {
	t.Helper()
	data, err := configmap.Render(e)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseTemplate([]byte(data[etcdpod.ConfigFileName]))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// previousFormat is the template as the previous version of our druid rendered it for a prefixed Etcd:
// initial-cluster under the member names, no member-name-prefix.
func previousFormat(t *testing.T, e *druidv1alpha1.Etcd) Template {
	t.Helper()
	tmpl := rendered(t, e)
	prefix := tmpl.MemberNamePrefix()
	if prefix == "" {
		t.Fatal("previousFormat needs a prefixed Etcd")
	}
	ic, err := ParseInitialCluster(tmpl.str(etcdpod.KeyInitialCluster))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ic {
		ic[i].Name = prefix + "-" + ic[i].Name
	}
	tmpl[etcdpod.KeyInitialCluster] = ic.String()
	delete(tmpl, etcdpod.KeyMemberNamePrefix)
	return tmpl
}

// TestPrefixedMembersGetTheirMemberNames: from the pod-keyed template (our druid and the upstream one), each
// member is served its name `<prefix>-<pod>` and an initial-cluster under the member names, which etcd's
// loader takes; member-name-prefix is not passed on.
func TestPrefixedMembersGetTheirMemberNames(t *testing.T) {
	g := NewWithT(t)
	tmpl := rendered(t, newEtcd(3, false, "shoot--p--s"))
	g.Expect(tmpl.str(etcdpod.KeyInitialCluster)).To(HavePrefix("etcd-main-0=http://"), "druid keys initial-cluster by pod")
	wantCluster := "shoot--p--s-etcd-main-0=" + peerURL("etcd-main-0") +
		",shoot--p--s-etcd-main-1=" + peerURL("etcd-main-1") +
		",shoot--p--s-etcd-main-2=" + peerURL("etcd-main-2")

	ic, err := tmpl.InitialCluster()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ic.String()).To(Equal(wantCluster), "the initializer and the cluster size see the member names")

	for _, pod := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		cfg, err := Resolve(tmpl, pod, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Member.Name).To(Equal("shoot--p--s-" + pod))
		g.Expect(cfg.InitialCluster()).To(Equal(wantCluster))
		out, err := cfg.YAML()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(out)).NotTo(ContainSubstring("member-name-prefix"))
		ec := loadInEtcd(t, cfg)
		g.Expect(ec.Name).To(Equal("shoot--p--s-" + pod))
		g.Expect(ec.InitialCluster).To(Equal(wantCluster))
		peer, client := urlStrings(ec)
		g.Expect(peer).To(Equal([]string{peerURL(pod)}), "hosts stay the pod's")
		g.Expect(client).To(Equal([]string{clientURL(pod)}))
		g.Expect(ec.Validate()).To(Succeed())
	}
	// Resolving twice (a Config's values read back as a template) must not prefix again.
	cfg, err := Resolve(tmpl, "etcd-main-0", nil)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := Template(cfg.values).InitialCluster()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.String()).To(Equal(wantCluster))
}

// TestPreviousFormatResolvesTheSame: a ConfigMap our previous druid rendered (initial-cluster under member
// names, no member-name-prefix) serves every member exactly the configuration the new format serves, so
// a rolling update of druid keeps the running members' names.
func TestPreviousFormatResolvesTheSame(t *testing.T) {
	g := NewWithT(t)
	for _, prefix := range []string{"shoot--p--s", "etcd-main-1", "x"} {
		e := newEtcd(3, true, prefix)
		current, previous := rendered(t, e), previousFormat(t, e)
		g.Expect(previous.str(etcdpod.KeyInitialCluster)).To(HavePrefix(prefix + "-etcd-main-0=https://"))
		for _, pod := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
			a, err := Resolve(current, pod, nil)
			g.Expect(err).NotTo(HaveOccurred())
			b, err := Resolve(previous, pod, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(b.Member).To(Equal(a.Member), "prefix %q, pod %s", prefix, pod)
			g.Expect(a.Member.Name).To(Equal(prefix + "-" + pod))
			g.Expect(b.InitialCluster()).To(Equal(a.InitialCluster()))
			ic, err := previous.InitialCluster()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ic).To(HaveLen(3))
		}
	}
}

// TestPrefixThatLooksLikeAPodName: a prefix equal to another pod's name names every member after its own pod.
func TestPrefixThatLooksLikeAPodName(t *testing.T) {
	g := NewWithT(t)
	tmpl := rendered(t, newEtcd(3, false, "etcd-main-1"))
	for _, pod := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		cfg, err := Resolve(tmpl, pod, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Member.Name).To(Equal("etcd-main-1-" + pod))
		g.Expect(cfg.Member.PeerURLs).To(Equal([]string{peerURL(pod)}))
		ec := loadInEtcd(t, cfg)
		g.Expect(ec.Name).To(Equal("etcd-main-1-" + pod))
	}
	// A template whose initial-cluster lacks the prefixed member is reported, not guessed.
	tmpl[etcdpod.KeyInitialCluster] = "etcd-main-0=" + peerURL("etcd-main-0")
	tmpl[etcdpod.KeyMemberNamePrefix] = "p"
	delete(tmpl[etcdpod.KeyInitialAdvertisePeerURLs].(map[string]any), "etcd-main-0")
	tmpl[etcdpod.KeyInitialAdvertisePeerURLs].(map[string]any)["etcd-main-5"] = []any{peerURL("etcd-main-5")}
	tmpl[etcdpod.KeyAdvertiseClientURLs].(map[string]any)["etcd-main-5"] = []any{clientURL("etcd-main-5")}
	_, err := Resolve(tmpl, "etcd-main-5", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`no member for pod "etcd-main-5" (member-name-prefix "p")`)))
}

// TestAdditionalPeerURLsAreAdvertised: a member with additional peer URLs advertises all of them, and
// initial-cluster lists each under its member name; the other members are unchanged and the cluster size
// counts members, not URLs.
func TestAdditionalPeerURLsAreAdvertised(t *testing.T) {
	g := NewWithT(t)
	for _, prefix := range []string{"", "shoot--p--s"} {
		e := newEtcd(3, false, prefix)
		e.Spec.Etcd.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{{MemberName: "etcd-main-1", URLs: []string{"http://10.0.0.1:2380", "http://etcd-1.other.example:2380"}}}
		tmpl := rendered(t, e)
		ic, err := tmpl.InitialCluster()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ic).To(HaveLen(3))

		name := func(pod string) string { return MemberName(prefix, pod) }
		wantCluster := name("etcd-main-0") + "=" + peerURL("etcd-main-0") +
			"," + name("etcd-main-1") + "=" + peerURL("etcd-main-1") +
			"," + name("etcd-main-1") + "=http://10.0.0.1:2380" +
			"," + name("etcd-main-1") + "=http://etcd-1.other.example:2380" +
			"," + name("etcd-main-2") + "=" + peerURL("etcd-main-2")

		cfg, err := Resolve(tmpl, "etcd-main-1", nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Member.Name).To(Equal(name("etcd-main-1")))
		ec := loadInEtcd(t, cfg)
		peer, _ := urlStrings(ec)
		g.Expect(cfg.Member.PeerURLs).To(Equal([]string{peerURL("etcd-main-1"), "http://10.0.0.1:2380", "http://etcd-1.other.example:2380"}))
		g.Expect(peer).To(ConsistOf(cfg.Member.PeerURLs), "etcd sorts the URLs it loads")
		g.Expect(ec.InitialCluster).To(Equal(wantCluster))
		// etcd's own bootstrap check: the member's advertised URLs are its initial-cluster entry.
		urlsMap, _, err := ec.PeerURLsMapAndToken("etcd")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(urlsMap[name("etcd-main-1")].StringSlice()).To(ConsistOf(peer))
		g.Expect(urlsMap).To(HaveLen(3))

		other, err := Resolve(tmpl, "etcd-main-2", nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(other.Member.PeerURLs).To(Equal([]string{peerURL("etcd-main-2")}))
		g.Expect(other.InitialCluster()).To(Equal(wantCluster))
	}
}

// TestJoiningPrefixedLearner: a learner joining a prefixed cluster lists the running members under the names
// etcd knows and itself under its member name.
func TestJoiningPrefixedLearner(t *testing.T) {
	g := NewWithT(t)
	tmpl := rendered(t, newEtcd(3, false, "shoot--p--s"))
	current := []ClusterMember{
		{Name: "shoot--p--s-etcd-main-0", PeerURLs: []string{peerURL("etcd-main-0")}},
		{Name: "", PeerURLs: []string{peerURL("etcd-main-1")}},
	}
	cfg, err := Resolve(tmpl, "etcd-main-1", current)
	g.Expect(err).NotTo(HaveOccurred())
	ec := loadInEtcd(t, cfg)
	g.Expect(ec.Name).To(Equal("shoot--p--s-etcd-main-1"))
	g.Expect(ec.ClusterState).To(Equal(embed.ClusterStateFlagExisting))
	g.Expect(ec.InitialCluster).To(Equal("shoot--p--s-etcd-main-0=" + peerURL("etcd-main-0") + ",shoot--p--s-etcd-main-1=" + peerURL("etcd-main-1")))
}

// TestNextClusterVersionCompatibleReachesEtcdHarmlessly: upstream druid writes
// next-cluster-version-compatible (ours does not); our etcd's loader takes a configuration carrying it (it
// has no such option), so a ConfigMap upstream druid rendered serves our members.
func TestNextClusterVersionCompatibleReachesEtcdHarmlessly(t *testing.T) {
	g := NewWithT(t)
	tmpl := rendered(t, newEtcd(1, false, ""))
	tmpl["next-cluster-version-compatible"] = true
	cfg, err := Resolve(tmpl, "etcd-main-0", nil)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := cfg.YAML()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("next-cluster-version-compatible: true"))
	g.Expect(loadInEtcd(t, cfg).Validate()).To(Succeed())
}

func TestMemberName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(MemberName("", "etcd-main-0")).To(Equal("etcd-main-0"))
	g.Expect(MemberName("garden", "etcd-main-0")).To(Equal("garden-etcd-main-0"))
}
