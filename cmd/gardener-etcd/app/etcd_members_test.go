package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// tlsMember is a real etcd member serving its client URL over TLS with client certificates required, as a
// member of an Etcd with spec.etcd.clientUrlTls does, and the Etcd in the apiserver whose secrets hold the
// CA and the client certificate.
type tlsMember struct {
	namespace, kubeconfig string
	member                *etcdserver.Member
	client                *clientv3.Client
}

// smallQuota lets a test raise NOSPACE with a few MiB of writes.
const smallQuota = 4 << 20

func newTLSMember(t *testing.T) tlsMember {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	ca := testpki.NewCA(t)
	server := ca.Issue(t, "server", "etcd-main-client."+namespace+".svc")
	clientPair := ca.Issue(t, "client")
	clientURL := url.URL{Scheme: "https", Host: freeport.Addr(t)}
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "etcd-main-0", ClientURL: clientURL, Configure: func(c *embed.Config) {
		c.ClientTLSInfo = ca.TLSInfo(server)
		c.QuotaBackendBytes = smallQuota
	}})

	secret := func(name string, data map[string][]byte) {
		g.Expect(env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data})).To(Succeed())
	}
	secret("etcd-ca", map[string][]byte{"bundle.crt": readFile(t, ca.CertFile)})
	secret("etcd-client", map[string][]byte{"tls.crt": readFile(t, clientPair.CertFile), "tls.key": readFile(t, clientPair.KeyFile)})
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main"},
		Spec: druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "main"}, Replicas: 1, Etcd: druidv1alpha1.EtcdConfig{
			ClientUrlTLS: &druidv1alpha1.TLSConfig{
				TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "etcd-ca"}, DataKey: ptr.To("bundle.crt")},
				ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"},
				ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client"},
			},
		}},
	}
	g.Expect(env.Client.Create(context.Background(), etcd)).To(Succeed())

	tlsCfg, err := ca.TLSInfo(clientPair).ClientConfig()
	g.Expect(err).NotTo(HaveOccurred())
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.Endpoint()}, TLS: tlsCfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cli.Close() })
	return tlsMember{namespace: namespace, kubeconfig: kubeconfigFor(t, env, namespace), member: m, client: cli}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fillUntilNoSpace overwrites keys until etcd refuses a write with NOSPACE.
func fillUntilNoSpace(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	pad := strings.Repeat("v", 16<<10)
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("no NOSPACE after 100000 writes")
		}
		_, err := cli.Put(t.Context(), fmt.Sprintf("key/%02d", i%50), fmt.Sprintf("%08d-%s", i, pad))
		if errors.Is(err, rpctypes.ErrNoSpace) {
			return
		}
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
}

// `etcd alarms` reaches a TLS member with the CA and client certificate of the Etcd's own secrets (the
// serving certificate checked against the client Service's name) and lists NOSPACE once etcd raised it.
func TestEtcdAlarmsListsNoSpaceOfATLSMember(t *testing.T) {
	f := newTLSMember(t)
	g := NewWithT(t)
	args := []string{"etcd", "alarms", "etcd-main", "--kubeconfig", f.kubeconfig, "--endpoints", f.member.Endpoint()}

	out, _, err := run(t, args...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("No active alarms on Etcd etcd-main.\n"))

	fillUntilNoSpace(t, f.client)
	id := fmt.Sprintf("%x", uint64(f.member.Etcd.Server.MemberID()))
	out, _, err = run(t, args...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`(?m)^MEMBER\s+ID\s+ALARM$`))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-main-0", id, "NOSPACE").String()))

	out, _, err = run(t, append(args, "-o", "json")...)
	g.Expect(err).NotTo(HaveOccurred())
	var alarms []etcdops.Alarm
	g.Expect(json.Unmarshal([]byte(out), &alarms)).To(Succeed())
	g.Expect(alarms).To(Equal([]etcdops.Alarm{{Member: "etcd-main-0", MemberID: id, Alarm: "NOSPACE"}}))
}

// Without the Etcd's CA the member cannot be reached: a missing secret is named with its spec field, and
// a serving certificate without the expected name is refused.
func TestEtcdAlarmsRefusesWhatItCannotTrust(t *testing.T) {
	f := newTLSMember(t)
	g := NewWithT(t)
	env := apiserver(t)
	g.Expect(env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: "etcd-ca"}})).To(Succeed())

	_, _, err := run(t, "etcd", "alarms", "etcd-main", "--kubeconfig", f.kubeconfig, "--endpoints", f.member.Endpoint())
	g.Expect(err).To(MatchError(ContainSubstring("reading secret etcd-ca of spec.etcd.clientUrlTls.tlsCASecretRef (or pass --cacert)")))

	_, _, err = run(t, "etcd", "alarms", "etcd-main", "--kubeconfig", f.kubeconfig, "--endpoints", f.member.Endpoint(),
		"--cacert", os.DevNull)
	g.Expect(err).To(MatchError("the CA bundle holds no PEM certificate"))

	_, _, err = run(t, "etcd", "alarms", "no-such-etcd", "--kubeconfig", f.kubeconfig)
	g.Expect(err).To(MatchError("no Etcd no-such-etcd in namespace " + f.namespace))
}

// `etcd defragment` on a three-member cluster: every member once, followers first, the leader last after
// leadership moved away, each database file smaller afterwards, and the cluster serves writes.
func TestEtcdDefragmentDefragmentsEveryMemberLeaderLast(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 3, nil, druidv1alpha1.EtcdStatus{})
	cluster := etcdserver.StartCluster(t, 3, nil)
	cli := cluster.Client(t)
	etcdserver.Fragment(t, cli)
	leader := cluster.Leader()
	leaderID := fmt.Sprintf("%x", uint64(leader.Etcd.Server.MemberID()))

	out, _, err := run(t, "etcd", "defragment", "etcd-main", "-n", namespace, "--kubeconfig", kubeconfigFor(t, env, ""),
		"--endpoints", strings.Join(cluster.Endpoints(), ","), "-o", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var res etcdops.DefragmentResult
	g.Expect(json.Unmarshal([]byte(out), &res)).To(Succeed())
	g.Expect(res.Members).To(HaveLen(3))
	g.Expect(res.Members[2].MemberID).To(Equal(leaderID), "the leader goes last")
	g.Expect(res.LeaderMovedTo).NotTo(BeEmpty())
	g.Expect(res.LeaderMovedTo).NotTo(Equal(leaderID))
	for _, m := range res.Members {
		g.Expect(m.DBSizeAfter).To(BeNumerically("<", m.DBSizeBefore), "member %s", m.Member)
	}
	_, err = cli.Put(t.Context(), "after", "defragmentation")
	g.Expect(err).NotTo(HaveOccurred())

	out, _, err = run(t, "etcd", "defragment", "etcd-main", "-n", namespace, "--kubeconfig", kubeconfigFor(t, env, ""),
		"--endpoints", strings.Join(cluster.Endpoints(), ","))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`(?m)^MEMBER\s+ID\s+DB SIZE BEFORE\s+DB SIZE AFTER$`))
	g.Expect(out).To(MatchRegexp(`(?m)^Leadership moved to member [0-9a-f]+ before the leader's turn\.$`))
}

// With a member down nothing is defragmented and the command fails saying why.
func TestEtcdDefragmentRefusesWhileAMemberIsDown(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 3, nil, druidv1alpha1.EtcdStatus{})
	cluster := etcdserver.StartCluster(t, 3, nil)
	cluster.Members[2].Stop()

	out, _, err := run(t, "etcd", "defragment", "etcd-main", "-n", namespace, "--kubeconfig", kubeconfigFor(t, env, ""),
		"--endpoints", cluster.Members[0].Endpoint())
	g.Expect(err).To(MatchError(ContainSubstring("defragmentation stopped after 0 member(s): cluster not healthy, defragmentation postponed")))
	g.Expect(out).To(BeEmpty())
}
