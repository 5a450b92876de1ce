package pod

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// pod is one etcd pod of a single-member Etcd on 127.0.0.1: druid's template with test ports and paths,
// the real sidecar API with the data-dir-only initializer, and a wrapper configured as druid configures it.
type pod struct {
	t         *testing.T
	dataDir   string
	markerDir string
	clientURL url.URL
	wrapper   wrapper.Options
	modes     *modeRecorder
}

// modeRecorder passes through to the real initializer and remembers the modes the wrapper asked for.
type modeRecorder struct {
	httpapi.Initializer
	mu    sync.Mutex
	modes []podwire.InitMode
}

func (m *modeRecorder) Initialize(ctx context.Context, mode podwire.InitMode) error {
	m.mu.Lock()
	m.modes = append(m.modes, mode)
	m.mu.Unlock()
	return m.Initializer.Initialize(ctx, mode)
}

func (m *modeRecorder) last() podwire.InitMode {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.modes) == 0 {
		return ""
	}
	return m.modes[len(m.modes)-1]
}

// tlsSetup, when set, makes etcd serve clients over https and the sidecar serve https.
type tlsSetup struct {
	ca      *testpki.CA
	etcd    testpki.Pair
	client  testpki.Pair
	sidecar testpki.Pair
}

func newPod(t *testing.T, tls *tlsSetup) *pod {
	t.Helper()
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"}}
	etcd.Spec.Replicas = 1
	druidv1alpha1.SetDefaults(etcd)
	tmpl := configmap.NewTemplate(etcd)
	p := &pod{t: t, dataDir: filepath.Join(t.TempDir(), "new.etcd"), markerDir: t.TempDir(), modes: &modeRecorder{}}
	p.clientURL = etcdserver.FreeURL(t)
	peerURL := etcdserver.FreeURL(t)
	if tls != nil {
		p.clientURL.Scheme = "https"
		tmpl.ClientTransportSecurity = &etcdpod.SecurityConfig{CertFile: tls.etcd.CertFile, KeyFile: tls.etcd.KeyFile, ClientCertAuth: true, TrustedCAFile: tls.ca.CertFile}
	}
	tmpl.DataDir = p.dataDir
	tmpl.ListenClientURLs, tmpl.ListenPeerURLs = p.clientURL.String(), peerURL.String()
	tmpl.AdvertiseClientURLs = map[string][]string{"etcd-main-0": {p.clientURL.String()}}
	tmpl.InitialAdvertisePeerURLs = map[string][]string{"etcd-main-0": {peerURL.String()}}
	tmpl.InitialCluster = "etcd-main-0=" + peerURL.String()
	out, err := yaml.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	templatePath := filepath.Join(t.TempDir(), "etcd.conf.yaml")
	if err := os.WriteFile(templatePath, out, 0o600); err != nil {
		t.Fatal(err)
	}

	p.modes.Initializer = httpapi.DataDirOnlyInitializer{DataDir: p.dataDir}
	api := httpapi.New(t.Context(), httpapi.Options{
		Initializer: p.modes,
		Config: func(context.Context) ([]byte, error) {
			t, err := memberconfig.LoadTemplate(templatePath)
			if err != nil {
				return nil, err
			}
			cfg, err := memberconfig.Resolve(t, "etcd-main-0", nil)
			if err != nil {
				return nil, err
			}
			return cfg.YAML()
		},
		Log: testr.New(t),
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	var cert, key string
	scheme := "http"
	if tls != nil {
		cert, key, scheme = tls.sidecar.CertFile, tls.sidecar.KeyFile, "https"
	}
	go func() { defer close(served); _ = api.Serve(ctx, l, cert, key) }()
	t.Cleanup(func() { cancel(); <-served })
	t.Logf("sidecar API at %s://%s", scheme, l.Addr())

	p.wrapper = wrapper.DefaultOptions()
	p.wrapper.BackupRestoreHostPort = l.Addr().String()
	p.wrapper.EtcdServerName = "etcd-main-local"
	p.wrapper.WrapperPort = freePort(t)
	p.wrapper.ListenHost = "127.0.0.1"
	p.wrapper.MarkerDir = p.markerDir
	p.wrapper.PollInterval = 50 * time.Millisecond
	p.wrapper.EtcdLogger = zap.NewNop()
	if tls != nil {
		p.wrapper.BackupRestoreTLSEnabled = true
		p.wrapper.BackupRestoreCACertBundlePath = tls.ca.CertFile
		p.wrapper.EtcdClientCertPath, p.wrapper.EtcdClientKeyPath = tls.client.CertFile, tls.client.KeyFile
	}
	return p
}

// start runs the wrapper like the container runtime would; the returned channel yields Run's result.
func (p *pod) start(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- wrapper.Run(ctx, p.wrapper, testr.New(p.t)) }()
	return done
}

func (p *pod) wrapperURL() string { return "http://127.0.0.1:" + strconv.Itoa(p.wrapper.WrapperPort) }

func (p *pod) readyz() int {
	resp, err := http.Get(p.wrapperURL() + "/readyz")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestWrapperRunsEtcdFromTheSidecarAndRestartsInSanityMode(t *testing.T) {
	g := NewWithT(t)
	p := newPod(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	done := p.start(ctx)
	g.Eventually(p.readyz, time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK))
	g.Expect(p.modes.last()).To(Equal(podwire.InitFull), "first start: no clean-exit marker")
	cli := etcdserver.NewClient(t, p.clientURL.String())
	_, err := cli.Put(ctx, "survives", "restart")
	g.Expect(err).NotTo(HaveOccurred())

	// The sidecar's way of restarting etcd.
	g.Expect(member.WrapperRestarter{URL: p.wrapperURL()}.RestartEtcd(ctx)).To(Succeed())
	g.Eventually(done, time.Minute).Should(Receive(BeNil()), "a requested stop ends the wrapper with exit code 0")
	g.Expect(filepath.Join(p.markerDir, wrapper.CleanExitMarker)).To(BeAnExistingFile())
	g.Expect(p.readyz()).To(BeZero(), "the wrapper port is released")

	done = p.start(ctx)
	g.Eventually(p.readyz, time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK))
	g.Expect(p.modes.last()).To(Equal(podwire.InitSanity), "after a graceful stop")
	g.Expect(filepath.Join(p.markerDir, wrapper.CleanExitMarker)).NotTo(BeAnExistingFile(), "the marker is consumed at start")
	g.Eventually(func() string {
		resp, err := cli.Get(ctx, "survives")
		if err != nil || len(resp.Kvs) == 0 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}, 30*time.Second).Should(Equal("restart"))

	cancel() // SIGTERM
	g.Eventually(done, time.Minute).Should(Receive(BeNil()))
	g.Expect(filepath.Join(p.markerDir, wrapper.CleanExitMarker)).To(BeAnExistingFile())
}

func TestWrapperWithTLSToSidecarAndEtcd(t *testing.T) {
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	setup := &tlsSetup{ca: ca, etcd: ca.Issue(t, "etcd", "etcd-main-local"), client: ca.Issue(t, "client"), sidecar: ca.Issue(t, "sidecar")}
	p := newPod(t, setup)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := p.start(ctx)
	g.Eventually(p.readyz, time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK), "readiness reads through TLS with the client certificate")
	resp, err := http.Get(p.wrapperURL() + "/stop")
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed), "stop only on POST")
	cancel()
	g.Eventually(done, time.Minute).Should(Receive(BeNil()))
}

func TestFailedInitializationEndsTheWrapperWithTheReason(t *testing.T) {
	g := NewWithT(t)
	p := newPod(t, nil)
	g.Expect(os.MkdirAll(filepath.Join(p.dataDir, "lost+found"), 0o700)).To(Succeed())
	err := <-p.start(t.Context())
	g.Expect(err).To(MatchError(And(ContainSubstring("failed to initialize"), ContainSubstring("neither empty nor an etcd data dir"))))
	g.Expect(filepath.Join(p.markerDir, wrapper.CleanExitMarker)).NotTo(BeAnExistingFile())
}

func TestReadyzAndStopBeforeEtcdRuns(t *testing.T) {
	g := NewWithT(t)
	p := newPod(t, nil)
	p.wrapper.BackupRestoreHostPort = "127.0.0.1:1" // a sidecar that never answers
	ctx, cancel := context.WithCancel(t.Context())
	done := p.start(ctx)
	g.Eventually(p.readyz, 10*time.Second, 50*time.Millisecond).Should(Equal(http.StatusServiceUnavailable))
	code, phase, err := fetch(http.DefaultClient, http.MethodGet, p.wrapperURL()+"/phase")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(phase).To(Equal(string(podwire.PhaseWaitingForInitialization)), "the only phase in which the sidecar may initialize")
	resp, err := http.Post(p.wrapperURL()+"/stop", "", nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusConflict))
	cancel()
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()), "terminated while waiting: nothing to report")
	g.Expect(filepath.Join(p.markerDir, wrapper.CleanExitMarker)).NotTo(BeAnExistingFile(), "etcd never ran, so it did not stop gracefully")
}
