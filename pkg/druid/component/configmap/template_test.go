package configmap

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

func newEtcd(replicas int32, peerTLS, clientTLS bool) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--p--s"}}
	e.Spec.Replicas = replicas
	e.Spec.Etcd.Quota = ptr.To(resource.MustParse("2Gi"))
	e.Spec.Common = druidv1alpha1.SharedConfig{AutoCompactionMode: ptr.To(druidv1alpha1.Revision), AutoCompactionRetention: ptr.To("1000")}
	if peerTLS {
		e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "peer-ca"}, DataKey: ptr.To("bundle.crt")},
			ServerTLSSecretRef: corev1.SecretReference{Name: "peer-server"},
		}}
	}
	if clientTLS {
		e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "client"},
		}
	}
	druidv1alpha1.SetDefaults(e)
	return e
}

// parse renders the ConfigMap data and reads etcd.conf.yaml back as a generic map, the way the sidecar would.
func parse(t *testing.T, e *druidv1alpha1.Etcd) map[string]any {
	t.Helper()
	data, err := Render(e)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(data).To(HaveLen(1))
	var out map[string]any
	NewWithT(t).Expect(yaml.Unmarshal([]byte(data[etcdpod.ConfigFileName]), &out)).To(Succeed())
	return out
}

func TestSingleNodeWithoutTLS(t *testing.T) {
	g := NewWithT(t)
	cfg := parse(t, newEtcd(1, false, false))
	g.Expect(cfg).To(HaveKeyWithValue("initial-cluster", "etcd-main-0=http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"))
	g.Expect(cfg).To(HaveKeyWithValue("initial-advertise-peer-urls", map[string]any{
		"etcd-main-0": []any{"http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"}}))
	g.Expect(cfg).To(HaveKeyWithValue("advertise-client-urls", map[string]any{
		"etcd-main-0": []any{"http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2379"}}))
	g.Expect(cfg).To(HaveKeyWithValue("listen-client-urls", "http://0.0.0.0:2379"))
	g.Expect(cfg).To(HaveKeyWithValue("listen-peer-urls", "http://0.0.0.0:2380"))
	g.Expect(cfg).To(HaveKeyWithValue("data-dir", "/var/etcd/data/new.etcd"))
	g.Expect(cfg).To(HaveKeyWithValue("quota-backend-bytes", float64(2*1024*1024*1024)))
	g.Expect(cfg).To(HaveKeyWithValue("snapshot-count", float64(10000)))
	g.Expect(cfg).To(HaveKeyWithValue("auto-compaction-mode", "revision"))
	g.Expect(cfg).To(HaveKeyWithValue("auto-compaction-retention", "1000"))
	g.Expect(cfg).To(HaveKeyWithValue("initial-cluster-state", "new"))
	g.Expect(cfg).To(HaveKeyWithValue("metrics", "basic"))
	g.Expect(cfg).NotTo(HaveKey("client-transport-security"))
	g.Expect(cfg).NotTo(HaveKey("peer-transport-security"))
}

func TestThreeMembersWithPeerAndClientTLS(t *testing.T) {
	g := NewWithT(t)
	cfg := parse(t, newEtcd(3, true, true))
	members := strings.Split(cfg["initial-cluster"].(string), ",")
	g.Expect(members).To(Equal([]string{
		"etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-main-2=https://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380",
	}))
	g.Expect(cfg["initial-advertise-peer-urls"]).To(HaveLen(3))
	g.Expect(cfg["initial-advertise-peer-urls"]).To(HaveKeyWithValue("etcd-main-2", []any{"https://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380"}))
	g.Expect(cfg["advertise-client-urls"]).To(HaveKeyWithValue("etcd-main-1", []any{"https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2379"}))
	g.Expect(cfg).To(HaveKeyWithValue("listen-peer-urls", "https://0.0.0.0:2380"))
	g.Expect(cfg).To(HaveKeyWithValue("listen-client-urls", "https://0.0.0.0:2379"))
	g.Expect(cfg).To(HaveKeyWithValue("client-transport-security", map[string]any{
		"cert-file": "/var/etcd/ssl/server/tls.crt", "key-file": "/var/etcd/ssl/server/tls.key",
		"client-cert-auth": true, "trusted-ca-file": "/var/etcd/ssl/ca/ca.crt", "auto-tls": false,
	}))
	g.Expect(cfg).To(HaveKeyWithValue("peer-transport-security", map[string]any{
		"cert-file": "/var/etcd/ssl/peer/server/tls.crt", "key-file": "/var/etcd/ssl/peer/server/tls.key",
		"client-cert-auth": true, "trusted-ca-file": "/var/etcd/ssl/peer/ca/bundle.crt", "auto-tls": false,
	}))
}

func TestPeerTLSOnlyKeepsClientURLsPlain(t *testing.T) {
	g := NewWithT(t)
	cfg := parse(t, newEtcd(3, true, false))
	g.Expect(cfg["initial-cluster"]).To(ContainSubstring("etcd-main-0=https://"))
	g.Expect(cfg).To(HaveKeyWithValue("listen-client-urls", "http://0.0.0.0:2379"))
	g.Expect(cfg).NotTo(HaveKey("client-transport-security"))
}

// TestMemberNamePrefixIsRenderedAsUpstream: as in upstream druid, initial-cluster and the URL maps stay
// keyed by pod name; the prefix goes into member-name-prefix, and the sidecar names the member from it.
func TestMemberNamePrefixIsRenderedAsUpstream(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(3, false, false)
	e.Spec.MemberNamePrefix = ptr.To("shoot--p--s")
	cfg := parse(t, e)
	g.Expect(cfg).To(HaveKeyWithValue("initial-cluster",
		"etcd-main-0=http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380,"+
			"etcd-main-1=http://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380,"+
			"etcd-main-2=http://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380"))
	g.Expect(cfg).To(HaveKeyWithValue("member-name-prefix", "shoot--p--s"))
	g.Expect(cfg["initial-advertise-peer-urls"]).To(HaveKey("etcd-main-0"))
	g.Expect(cfg["advertise-client-urls"]).To(HaveKey("etcd-main-2"))
	g.Expect(cfg["initial-advertise-peer-urls"]).NotTo(HaveKey("shoot--p--s-etcd-main-0"))
}

// TestNoMemberNamePrefixNoKey: without a prefix (or with an empty one) the key is left out, as there.
func TestNoMemberNamePrefixNoKey(t *testing.T) {
	g := NewWithT(t)
	g.Expect(parse(t, newEtcd(1, false, false))).NotTo(HaveKey("member-name-prefix"))
	e := newEtcd(1, false, false)
	e.Spec.MemberNamePrefix = ptr.To("")
	g.Expect(parse(t, e)).NotTo(HaveKey("member-name-prefix"))
}

// TestAdditionalAdvertisePeerURLs: the URLs of the entry named after a pod follow its Service URL in its
// initial-advertise-peer-urls and in initial-cluster, one `<pod>=<url>` entry per URL; an entry named after
// the prefixed member name matches nothing (upstream druid compares with the pod name); client URLs
// stay as they are.
func TestAdditionalAdvertisePeerURLs(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(3, true, false)
	e.Spec.MemberNamePrefix = ptr.To("x")
	e.Spec.Etcd.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{
		{MemberName: "etcd-main-1", URLs: []string{"https://10.0.0.1:2380", "https://etcd-1.other.example:2380"}},
		{MemberName: "x-etcd-main-2", URLs: []string{"https://10.0.0.2:2380"}},
		{MemberName: "etcd-main-9", URLs: []string{"https://10.0.0.9:2380"}},
	}
	cfg := parse(t, e)
	g.Expect(strings.Split(cfg["initial-cluster"].(string), ",")).To(Equal([]string{
		"etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-main-1=https://10.0.0.1:2380",
		"etcd-main-1=https://etcd-1.other.example:2380",
		"etcd-main-2=https://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380",
	}))
	g.Expect(cfg["initial-advertise-peer-urls"]).To(Equal(map[string]any{
		"etcd-main-0": []any{"https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"},
		"etcd-main-1": []any{"https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380", "https://10.0.0.1:2380", "https://etcd-1.other.example:2380"},
		"etcd-main-2": []any{"https://etcd-main-2.etcd-main-peer.shoot--p--s.svc:2380"},
	}))
	g.Expect(cfg["advertise-client-urls"]).To(HaveKeyWithValue("etcd-main-1", []any{"http://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2379"}))
	g.Expect(e.Spec.Etcd.AdditionalAdvertisePeerURLs[0].URLs).To(HaveLen(2), "rendering must not change the spec")
}

// TestTemplateKeysAreTheUpstreamOnes pins the complete key set of etcd.conf.yaml against upstream
// druid's etcdConfig (internal/component/configmap/etcdconfig.go) plus the keys only ours writes.
func TestTemplateKeysAreTheUpstreamOnes(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(3, true, true)
	e.Spec.MemberNamePrefix = ptr.To("p")
	cfg := parse(t, e)
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	g.Expect(keys).To(ConsistOf(
		// upstream druid's keys
		"name", "data-dir", "metrics", "snapshot-count", "enable-grpc-gateway", "quota-backend-bytes",
		"initial-cluster-token", "initial-cluster-state", "initial-cluster", "auto-compaction-mode",
		"auto-compaction-retention", "listen-peer-urls", "listen-client-urls", "initial-advertise-peer-urls",
		"advertise-client-urls", "client-transport-security", "peer-transport-security", "member-name-prefix",
		// ours besides: etcd's defaults written out so that every member agrees on them
		"heartbeat-interval", "election-timeout",
	))
	// Upstream druid also writes next-cluster-version-compatible (an etcd 3.5.26 option our etcd does not
	// have); leaving it out keeps an unprefixed Etcd's ConfigMap, and so its pods, unchanged by the update.
	g.Expect(cfg).NotTo(HaveKey("next-cluster-version-compatible"))
}

func TestHibernatedHasNoMembers(t *testing.T) {
	cfg := parse(t, newEtcd(0, false, false))
	NewWithT(t).Expect(cfg).To(HaveKeyWithValue("initial-cluster", ""))
}

func TestRenderingAndChecksumAreDeterministic(t *testing.T) {
	g := NewWithT(t)
	first, err := Render(newEtcd(5, true, true))
	g.Expect(err).NotTo(HaveOccurred())
	for i := 0; i < 20; i++ {
		again, err := Render(newEtcd(5, true, true))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(Equal(first))
		g.Expect(Checksum(again)).To(Equal(Checksum(first)))
	}
	three, err := Render(newEtcd(3, true, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Checksum(three)).NotTo(Equal(Checksum(first)))
	g.Expect(Checksum(first)).To(MatchRegexp("^[0-9a-f]{64}$"))
}

// TestBackendBboltFreelistType: the upstream field reaches etcd's configuration; unset leaves etcd's default.
func TestBackendBboltFreelistType(t *testing.T) {
	g := NewWithT(t)
	g.Expect(parse(t, newEtcd(1, false, false))).NotTo(HaveKey("backend-bbolt-freelist-type"))
	e := newEtcd(3, false, false)
	e.Spec.Etcd.BackendBboltFreelistType = ptr.To(druidv1alpha1.BboltFreelistArray)
	g.Expect(parse(t, e)).To(HaveKeyWithValue("backend-bbolt-freelist-type", "array"))
}
