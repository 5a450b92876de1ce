package druid

import (
	"context"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// controlPlane is a fresh kube-apiserver and etcd for one measurement, with the benchmark's own client:
// unthrottled, because the benchmark is not what is measured, and counted, so that its requests can be
// taken out of the apiserver's.
type controlPlane struct {
	env                   *envtest.Env
	apiserverPID, etcdPID int
	cfg                   *rest.Config
	counting              *countingTransport
	client                client.Client
}

// startControlPlane starts a control plane; the caller stops it.
func startControlPlane(b *testing.B) *controlPlane {
	b.Helper()
	// envtest's default service range is a /24: 254 ClusterIPs, fewer than one client Service per Etcd.
	env, err := envtest.Start(envtest.Options{APIServerFlags: map[string]string{"service-cluster-ip-range": "10.0.0.0/16"}, EtcdFlags: etcdFlags()})
	if err != nil {
		b.Fatal(err)
	}
	p := &controlPlane{env: env, counting: newCountingTransport(nil)}
	if p.apiserverPID, p.etcdPID, err = env.ControlPlanePIDs(); err != nil {
		p.stop()
		b.Fatal(err)
	}
	p.cfg = rest.CopyConfig(env.Config)
	p.cfg.QPS, p.cfg.Burst = -1, 0
	p.cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { p.counting.next = rt; return p.counting })
	if p.client, err = client.New(p.cfg, client.Options{Scheme: envtest.Scheme}); err != nil {
		p.stop()
		b.Fatal(err)
	}
	return p
}

// minCreationSample is the fewest Etcds runCreationAlone creates.
const minCreationSample = 500

func (p *controlPlane) stop() { _ = p.env.Stop() }

// cpu is the CPU seconds kube-apiserver and etcd have spent so far.
func (p *controlPlane) cpu(b *testing.B) float64 {
	return mustCPU(b, p.apiserverPID) + mustCPU(b, p.etcdPID)
}

// idle measures the control plane's idle CPU rate over settle and returns the CPU seconds at its end with
// the rate per second.
func (p *controlPlane) idle(b *testing.B) (cpuNow, rate float64) {
	from := p.cpu(b)
	time.Sleep(settle)
	cpuNow = p.cpu(b)
	return cpuNow, (cpuNow - from) / settle.Seconds()
}

// runCreationAlone measures what creating a burst costs kube-apiserver and etcd with no druid running:
// the namespace, the Etcds and their secrets through the same creators, seen by the same watch, after
// the same warm-up Etcd. It returns the settled CPU per Etcd in ms, measured as a burst's (until settle
// after the last create, less the idle rate). A burst's settled figure less this one is what its druid
// cost the control plane: the benchmark's own creates are the same for both druids, and counting them
// would bring every ratio between the druids closer to 1.
//
// It creates at least minCreationSample Etcds: creating one costs the same at any burst size (7.3–8.1 ms
// at 500 and 1,000), but 50 cost the control plane less than half a CPU second, of the order of the idle
// rate's error over the window, and single runs of 50 ranged from 7.3 to 14.3 ms.
func runCreationAlone(b *testing.B, n int) float64 {
	b.Helper()
	n = max(n, minCreationSample)
	ctx := context.Background()
	p := startControlPlane(b)
	defer p.stop()
	createBurst(b, ctx, p.client, "warm-up", 1)
	namespace := burstNamespace(n)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch := mustWatch(b, watchCtx, p.cfg, namespace, n)
	cpuBefore, idleRate := p.idle(b)
	start := watch.begin()
	createBurst(b, ctx, p.client, namespace, n)
	time.Sleep(settle)
	settled := p.cpu(b) - cpuBefore - idleRate*time.Since(start).Seconds()
	return settled * 1000 / float64(n)
}
