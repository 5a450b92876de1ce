package memberconfig

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

func newEtcd(replicas int32, tls bool, prefix string) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--p--s"}}
	e.Spec.Replicas = replicas
	e.Spec.Etcd.Quota = ptr.To(resource.MustParse("2Gi"))
	if prefix != "" {
		e.Spec.MemberNamePrefix = ptr.To(prefix)
	}
	if tls {
		e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "peer-ca"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "peer-server"},
		}}
		e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "client"},
		}
	}
	druidv1alpha1.SetDefaults(e)
	return e
}

// templateFile writes druid's rendered template where the sidecar would find it and points ETCD_CONF at it.
func templateFile(t *testing.T, e *druidv1alpha1.Etcd) string {
	t.Helper()
	data, err := configmap.Render(e)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), etcdpod.ConfigFileName)
	if err := os.WriteFile(path, []byte(data[etcdpod.ConfigFileName]), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(etcdpod.EnvConfigPath, path)
	return path
}

// loadInEtcd renders cfg and parses it with etcd's own loader, the way the wrapper does.
func loadInEtcd(t *testing.T, cfg *Config) *embed.Config {
	t.Helper()
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "etcd.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	ec, err := embed.ConfigFromFile(path)
	if err != nil {
		t.Fatalf("etcd rejects the rendered configuration: %v\n%s", err, out)
	}
	return ec
}

func urlStrings(ec *embed.Config) (peer, client []string) {
	for _, u := range ec.AdvertisePeerUrls {
		peer = append(peer, u.String())
	}
	for _, u := range ec.AdvertiseClientUrls {
		client = append(client, u.String())
	}
	return peer, client
}

func TestSingleMemberWithoutTLS(t *testing.T) {
	g := NewWithT(t)
	g.Expect(TemplatePath()).To(Equal("/var/etcd/config/etcd.conf.yaml"))
	path := templateFile(t, newEtcd(1, false, ""))
	g.Expect(TemplatePath()).To(Equal(path), "ETCD_CONF overrides the mount path")
	tmpl, err := LoadTemplate(TemplatePath())
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := Resolve(tmpl, "etcd-main-0", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Member.Name).To(Equal("etcd-main-0"))
	g.Expect(cfg.PeerTLS()).To(BeFalse())
	g.Expect(cfg.ListenPeerURLs()).To(Equal([]string{"http://0.0.0.0:2380"}))

	ec := loadInEtcd(t, cfg)
	peer, client := urlStrings(ec)
	g.Expect(ec.Name).To(Equal("etcd-main-0"))
	g.Expect(peer).To(Equal([]string{"http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"}))
	g.Expect(client).To(Equal([]string{"http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2379"}))
	g.Expect(ec.InitialCluster).To(Equal("etcd-main-0=http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"))
	g.Expect(ec.ClusterState).To(Equal(embed.ClusterStateFlagNew))
	g.Expect(ec.Dir).To(Equal("/var/etcd/data/new.etcd"))
	g.Expect(ec.ListenClientUrls[0].String()).To(Equal("http://0.0.0.0:2379"))
	g.Expect(ec.QuotaBackendBytes).To(Equal(int64(2<<30)), "keys the sidecar does not resolve pass through")
	g.Expect(ec.AutoCompactionMode).To(Equal("periodic"))
	g.Expect(ec.ClientTLSInfo.Empty()).To(BeTrue())
	g.Expect(ec.Validate()).To(Succeed())
}

func TestThreeMembersWithTLSResolveTheirOwnEntries(t *testing.T) {
	g := NewWithT(t)
	templateFile(t, newEtcd(3, true, ""))
	tmpl, err := LoadTemplate(TemplatePath())
	g.Expect(err).NotTo(HaveOccurred())
	wantCluster := "etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380," +
		"etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380," +
		"etcd-main-2=https://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380"
	for _, pod := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		cfg, err := Resolve(tmpl, pod, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.PeerTLS()).To(BeTrue())
		g.Expect(cfg.ListenPeerURLs()).To(Equal([]string{"https://0.0.0.0:2380"}), "what the switch compares the advertised URLs with")
		ec := loadInEtcd(t, cfg)
		peer, client := urlStrings(ec)
		g.Expect(ec.Name).To(Equal(pod))
		g.Expect(peer).To(Equal([]string{"https://" + pod + ".etcd-main-peer.shoot--p--s.svc:2380"}))
		g.Expect(client).To(Equal([]string{"https://" + pod + ".etcd-main-peer.shoot--p--s.svc:2379"}))
		g.Expect(ec.InitialCluster).To(Equal(wantCluster))
		g.Expect(ec.ClusterState).To(Equal(embed.ClusterStateFlagNew))
		g.Expect(ec.PeerTLSInfo.CertFile).To(Equal("/var/etcd/ssl/peer/server/tls.crt"))
		g.Expect(ec.PeerTLSInfo.TrustedCAFile).To(Equal("/var/etcd/ssl/peer/ca/ca.crt"))
		g.Expect(ec.PeerTLSInfo.ClientCertAuth).To(BeTrue())
		g.Expect(ec.ClientTLSInfo.KeyFile).To(Equal("/var/etcd/ssl/server/tls.key"))
		g.Expect(ec.Validate()).To(Succeed())
	}
}

func TestMemberNamePrefixNamesTheMember(t *testing.T) {
	g := NewWithT(t)
	tmpl, err := LoadTemplate(templateFile(t, newEtcd(3, false, "shoot--p--s")))
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := Resolve(tmpl, "etcd-main-1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Member.Name).To(Equal("shoot--p--s-etcd-main-1"))
	ec := loadInEtcd(t, cfg)
	g.Expect(ec.Name).To(Equal("shoot--p--s-etcd-main-1"))
	peer, _ := urlStrings(ec)
	g.Expect(peer).To(Equal([]string{"http://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380"}))
}

func TestJoiningLearnerListsTheCurrentMembersAndItself(t *testing.T) {
	g := NewWithT(t)
	tmpl, err := LoadTemplate(templateFile(t, newEtcd(3, true, "")))
	g.Expect(err).NotTo(HaveOccurred())
	current := []ClusterMember{
		{Name: "etcd-main-0", PeerURLs: []string{"https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"}},
		// Added as learner, not started yet: etcd reports it without a name.
		{Name: "", PeerURLs: []string{"https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380"}},
	}
	cfg, err := Resolve(tmpl, "etcd-main-1", current)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Joining).To(BeTrue())
	ec := loadInEtcd(t, cfg)
	g.Expect(ec.ClusterState).To(Equal(embed.ClusterStateFlagExisting))
	g.Expect(ec.InitialCluster).To(Equal(
		"etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380," +
			"etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380"))
}

func TestTemplateErrorsAreReportedNotFatal(t *testing.T) {
	g := NewWithT(t)
	tmpl, err := LoadTemplate(templateFile(t, newEtcd(1, false, "")))
	g.Expect(err).NotTo(HaveOccurred())

	_, err = Resolve(tmpl, "etcd-main-5", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`no entry for pod "etcd-main-5"`)))
	_, err = Resolve(tmpl, "", nil)
	g.Expect(err).To(MatchError(ContainSubstring("POD_NAME")))

	bad, err := ParseTemplate([]byte(`
initial-advertise-peer-urls: {p-0: ["not a url"]}
advertise-client-urls: {p-0: ["http://p-0:2379"]}
listen-peer-urls: http://0.0.0.0:2380
listen-client-urls: http://0.0.0.0:2379
initial-cluster: p-0=http://p-0:2380
`))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Resolve(bad, "p-0", nil)
	g.Expect(err).To(MatchError(ContainSubstring("initial-advertise-peer-urls")), "etcd's loader would exit the process on this URL")

	unknown, err := ParseTemplate([]byte(`
initial-advertise-peer-urls: {p-0: ["http://p-0:2380"]}
advertise-client-urls: {p-0: ["http://p-0:2379"]}
listen-peer-urls: http://0.0.0.0:2380
listen-client-urls: http://0.0.0.0:2379
initial-cluster: other=http://p-0:2380
`))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Resolve(unknown, "p-0", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`no member for pod "p-0"`)))
}

func TestInitialClusterRoundTripsSeveralURLsPerMember(t *testing.T) {
	g := NewWithT(t)
	ic, err := ParseInitialCluster("a=http://a:1,b=http://b:1,a=http://a:2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ic).To(Equal(InitialCluster{{Name: "a", PeerURLs: []string{"http://a:1", "http://a:2"}}, {Name: "b", PeerURLs: []string{"http://b:1"}}}))
	g.Expect(ic.String()).To(Equal("a=http://a:1,a=http://a:2,b=http://b:1"))
	_, err = ParseInitialCluster("a=http://a:1,broken")
	g.Expect(err).To(HaveOccurred())
	g.Expect(SameURLs([]string{"x", "y"}, []string{"y", "x"})).To(BeTrue())
	g.Expect(SameURLs([]string{"x"}, []string{"x", "y"})).To(BeFalse())
}

// The backup leader reads the quota from druid's template for members whose Status does not report one.
func TestTemplateQuotaBackendBytes(t *testing.T) {
	g := NewWithT(t)
	tmpl, err := LoadTemplate(templateFile(t, newEtcd(3, false, "")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.QuotaBackendBytes()).To(Equal(int64(2 << 30)))
	g.Expect(Template{}.QuotaBackendBytes()).To(BeZero())
}
