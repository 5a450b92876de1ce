package pod

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/heartbeat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/sidecar"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

func freePort(t *testing.T) int { return freeport.Port(t) }

// localPod is a single-member etcd pod run in-process: druid's template with test ports, the sidecar
// (Run) and a "kubelet" that restarts the wrapper whenever it exits.
type localPod struct {
	t            *testing.T
	templatePath string
	clientURL    url.URL
	peerHostPort string
	dataDir      string
	sidecar      sidecar.Options
	wrapper      wrapper.Options
	wrapperExits atomic.Int32
}

func (p *localPod) writeTemplate(peerTLS *etcdpod.SecurityConfig) string {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"}}
	e.Spec.Replicas = 1
	druidv1alpha1.SetDefaults(e)
	tmpl := configmap.NewTemplate(e)
	scheme := etcdpod.Scheme(peerTLS != nil)
	peerURL := scheme + "://" + p.peerHostPort
	tmpl.DataDir = p.dataDir
	tmpl.ListenClientURLs, tmpl.ListenPeerURLs = p.clientURL.String(), peerURL
	tmpl.AdvertiseClientURLs = map[string][]string{"etcd-main-0": {p.clientURL.String()}}
	tmpl.InitialAdvertisePeerURLs = map[string][]string{"etcd-main-0": {peerURL}}
	tmpl.InitialCluster = "etcd-main-0=" + peerURL
	tmpl.PeerTransportSecurity = peerTLS
	out, err := yaml.Marshal(tmpl)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.templatePath, out, 0o600); err != nil {
		p.t.Fatal(err)
	}
	return peerURL
}

// run starts the pod's containers; the returned function stops them like a pod deletion (SIGTERM to both)
// and waits for them.
func (p *localPod) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := sidecar.Run(ctx, p.sidecar, testr.New(p.t).WithName("sidecar")); err != nil {
			p.t.Errorf("sidecar: %v", err)
		}
	})
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := wrapper.Run(ctx, p.wrapper, testr.New(p.t).WithName("wrapper")); err != nil {
				p.t.Errorf("wrapper exited with an error: %v", err)
				return
			}
			if ctx.Err() == nil {
				p.wrapperExits.Add(1) // the kubelet restarts the container
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

func (p *localPod) ready() bool {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(p.wrapper.WrapperPort) + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// newLocalPod prepares a single-member pod (etcd-main-0 in namespace ns) with free ports; run starts it.
func newLocalPod(t *testing.T) *localPod {
	dir := t.TempDir()
	p := &localPod{t: t, templatePath: filepath.Join(dir, "etcd.conf.yaml"), clientURL: etcdserver.FreeURL(t), dataDir: filepath.Join(dir, "new.etcd")}
	p.peerHostPort = etcdserver.FreeURL(t).Host
	t.Setenv(etcdpod.EnvConfigPath, p.templatePath)
	t.Setenv(etcdpod.EnvPodName, "etcd-main-0")
	t.Setenv(etcdpod.EnvPodNamespace, "ns")

	wrapperPort := freePort(t)
	p.sidecar = sidecar.DefaultOptions()
	p.sidecar.Endpoints = []string{p.clientURL.String()}
	p.sidecar.DataDir = p.dataDir
	p.sidecar.ServerPort = freePort(t)
	p.sidecar.EtcdWrapperPort = wrapperPort
	p.wrapper = wrapper.DefaultOptions()
	p.wrapper.BackupRestoreHostPort = "127.0.0.1:" + strconv.Itoa(p.sidecar.ServerPort)
	p.wrapper.WrapperPort = wrapperPort
	p.wrapper.ListenHost = "127.0.0.1"
	p.wrapper.MarkerDir = dir
	p.wrapper.PollInterval = 50 * time.Millisecond
	p.wrapper.EtcdLogger = zap.NewNop()
	return p
}

// TestSingleMemberPeerTLSEnablement is the sidecar's part of the in-place peer-TLS switch (upstream etcd-druid's DEP-03 scale-up) end to end: a running
// single-member cluster with http peer URLs gets the https template (the pod restart of druid's pod
// update), the sidecar updates the member's peer URL, and the member ends up with an https peer URL (the
// lease annotation "true"), data intact. etcd is not restarted for the update: the pod started it with
// the https peer listener already.
func TestSingleMemberPeerTLSEnablement(t *testing.T) {
	g := NewWithT(t)
	p := newLocalPod(t)

	cli := etcdserver.NewClient(t, p.clientURL.String())
	peerTLS := func(ctx context.Context) (bool, []string) {
		local, err := member.LocalMember(ctx, cli, p.clientURL.String())
		if err != nil {
			return false, nil
		}
		return heartbeat.PeerTLSEnabled(local), local.Member.PeerURLs
	}

	httpPeer := p.writeTemplate(nil)
	stop := p.run()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	tlsOn, urls := peerTLS(t.Context())
	g.Expect(tlsOn).To(BeFalse())
	g.Expect(urls).To(Equal([]string{httpPeer}))
	_, err := cli.Put(t.Context(), "kept", "yes")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.wrapperExits.Load()).To(BeZero(), "nothing to switch with an http template")
	stop()

	// druid's rolling update: new template with https peer URLs and the peer certificates mounted.
	ca := testpki.NewCA(t)
	pair := ca.Issue(t, "peer")
	httpsPeer := p.writeTemplate(&etcdpod.SecurityConfig{CertFile: pair.CertFile, KeyFile: pair.KeyFile, TrustedCAFile: ca.CertFile, ClientCertAuth: true})
	stop = p.run()
	defer stop()
	g.Eventually(func() []string { _, urls := peerTLS(t.Context()); return urls }, time.Minute, 100*time.Millisecond).Should(Equal([]string{httpsPeer}))
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	tlsOn, _ = peerTLS(t.Context())
	g.Expect(tlsOn).To(BeTrue(), "the lease annotation would now say true")
	resp, err := cli.Get(t.Context(), "kept")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Kvs).To(HaveLen(1))
	_, err = cli.Put(t.Context(), "after", "switch")
	g.Expect(err).NotTo(HaveOccurred())
	g.Consistently(p.wrapperExits.Load, 2*time.Second, 200*time.Millisecond).Should(BeZero(), "no in-place etcd restart")

	code, body := httpGet(t, "http://127.0.0.1:"+strconv.Itoa(p.sidecar.ServerPort)+"/snapshot/full")
	g.Expect(code).To(Equal(http.StatusServiceUnavailable))
	g.Expect(body).To(ContainSubstring("without a snapshotter"))
	code, body = httpGet(t, "http://127.0.0.1:"+strconv.Itoa(p.sidecar.ServerPort)+"/healthz")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(MatchJSON(`{"health": true}`))
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode, string(buf[:n])
}
