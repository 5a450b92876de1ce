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
	e.Spec.SharedConfig = &druidv1alpha1.SharedConfig{AutoCompactionMode: ptr.To(druidv1alpha1.Revision), AutoCompactionRetention: ptr.To("1000")}
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

func TestMemberNamePrefixNamesMembersButNotHosts(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(1, false, false)
	e.Spec.MemberNamePrefix = ptr.To("x")
	cfg := parse(t, e)
	g.Expect(cfg).To(HaveKeyWithValue("initial-cluster", "x-etcd-main-0=http://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380"))
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

// TestBackendBboltFreelistType: the deployed field reaches etcd's configuration; unset leaves etcd's default.
func TestBackendBboltFreelistType(t *testing.T) {
	g := NewWithT(t)
	g.Expect(parse(t, newEtcd(1, false, false))).NotTo(HaveKey("backend-bbolt-freelist-type"))
	e := newEtcd(3, false, false)
	e.Spec.Etcd.BackendBboltFreelistType = ptr.To(druidv1alpha1.BboltFreelistArray)
	g.Expect(parse(t, e)).To(HaveKeyWithValue("backend-bbolt-freelist-type", "array"))
}
