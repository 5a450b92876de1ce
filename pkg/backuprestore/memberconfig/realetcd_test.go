package memberconfig

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// TestRealEtcdBootstrapsAPrefixedClusterWithAdditionalPeerURLs starts three embedded etcd members from the
// configurations this package serves for a template druid rendered with a memberNamePrefix and an additional
// peer URL: etcd's bootstrap checks (own name and peer URLs in initial-cluster, the same cluster on every
// member) pass, the members carry the prefixed names, and the member with the additional URL advertises
// both. The Service host names are replaced by local ports, nothing else of the rendered template.
func TestRealEtcdBootstrapsAPrefixedClusterWithAdditionalPeerURLs(t *testing.T) {
	g := NewWithT(t)
	const prefix = "shoot--p--s"
	pods := []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"}
	extra := "http://" + freeport.Addr(t)
	e := newEtcd(3, false, prefix)
	e.Spec.Etcd.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{{MemberName: "etcd-main-1", URLs: []string{extra}}}
	data, err := configmap.Render(e)
	g.Expect(err).NotTo(HaveOccurred())
	yamlText := data[etcdpod.ConfigFileName]
	g.Expect(yamlText).To(ContainSubstring("member-name-prefix: " + prefix))

	peers, clients := map[string]string{}, map[string]string{}
	for _, pod := range pods {
		peers[pod], clients[pod] = "http://"+freeport.Addr(t), "http://"+freeport.Addr(t)
		yamlText = strings.ReplaceAll(yamlText, peerURL(pod), peers[pod])
		yamlText = strings.ReplaceAll(yamlText, clientURL(pod), clients[pod])
	}
	tmpl, err := ParseTemplate([]byte(yamlText))
	g.Expect(err).NotTo(HaveOccurred())

	var servers []*embed.Etcd
	for _, pod := range pods {
		cfg, err := Resolve(tmpl, pod, nil)
		g.Expect(err).NotTo(HaveOccurred())
		// What differs between these members and pods: where they listen and keep their data.
		listenPeer := peers[pod]
		if pod == "etcd-main-1" {
			listenPeer += "," + extra
		}
		cfg.values[etcdpod.KeyListenPeerURLs] = listenPeer
		cfg.values[etcdpod.KeyListenClientURLs] = clients[pod]
		cfg.values[etcdpod.KeyDataDir] = t.TempDir()
		ec := loadInEtcd(t, cfg)
		// Closing makes etcd log "errors" about closed listeners; a refusal is StartEtcd's or Err()'s error.
		ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		srv, err := embed.StartEtcd(ec)
		g.Expect(err).NotTo(HaveOccurred(), "etcd refuses the configuration of %s", pod)
		t.Cleanup(func() { stopEmbedded(srv) })
		servers = append(servers, srv)
	}
	for i, srv := range servers {
		select {
		case <-srv.Server.ReadyNotify():
		case err := <-srv.Err():
			t.Fatalf("%s failed: %v", pods[i], err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s not ready after 30s", pods[i])
		}
	}

	cli := etcdserver.NewClient(t, clients["etcd-main-2"])
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	got := map[string][]string{}
	for _, m := range list.Members {
		got[m.Name] = m.PeerURLs
	}
	g.Expect(got).To(HaveLen(3))
	g.Expect(got).To(HaveKeyWithValue(prefix+"-etcd-main-0", ConsistOf(peers["etcd-main-0"])))
	g.Expect(got).To(HaveKeyWithValue(prefix+"-etcd-main-1", ConsistOf(peers["etcd-main-1"], extra)))
	g.Expect(got).To(HaveKeyWithValue(prefix+"-etcd-main-2", ConsistOf(peers["etcd-main-2"])))

	_, err = cli.Put(ctx, "k", "v")
	g.Expect(err).NotTo(HaveOccurred())
	for _, pod := range pods {
		member := etcdserver.NewClient(t, clients[pod])
		g.Eventually(func() int64 {
			r, err := member.Get(ctx, "k", clientv3.WithSerializable())
			if err != nil {
				return -1
			}
			return r.Count
		}).Should(Equal(int64(1)), "the write reaches %s", pod)
	}
}

// stopEmbedded closes a member. embed.Etcd.Close waits for the client servers, which only start once the
// member is ready, so a member that never became ready (the test failed) is hard-stopped instead and its
// listeners closed: the test fails rather than hangs.
func stopEmbedded(srv *embed.Etcd) {
	select {
	case <-srv.Server.ReadyNotify():
		srv.Close()
		return
	default:
	}
	srv.Server.HardStop()
	for _, l := range srv.Peers {
		_ = l.Close()
	}
	for _, l := range srv.Clients {
		_ = l.Close()
	}
}
