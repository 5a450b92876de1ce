// Package druid benchmarks etcd-druid at landscape scale on envtest: bursts of Etcds created at once, and
// for each burst how long until every Etcd has its StatefulSet, what druid spent (CPU, peak RSS) and what
// it cost the apiserver (requests by verb and resource from the apiserver's apiserver_request_total, and
// the CPU time of kube-apiserver and etcd).
//
// Run (not part of `go test`; the control plane only starts under -bench):
//
//	go test ./test/bench/druid/ -run '^$' -bench BenchmarkEtcdCreationBurst -benchtime 1x -timeout 60m
//
// DRUID_BENCH_SIZES sets the bursts (default "50,500,1000"; repeat sizes, e.g. "50,1000,50,1000", for the
// medians per size); DRUID_BENCH_BINARY runs a druid built elsewhere (e.g. from main) instead of building
// cmd/etcd-druid of this checkout; DRUID_BENCH_PROFILE_DIR writes CPU profiles of kube-apiserver and etcd
// for every burst.
//
// Every burst gets a fresh control plane and a fresh druid process, so that the figures of one burst do
// not carry the objects or the memory of the previous one. druid runs as its own process (found through
// $KUBECONFIG, leader election off, 10 Etcd workers), so that its CPU time and RSS are its own. One Etcd
// is reconciled first (warm-up, and proof that druid runs); then the burst's Etcds are created with their
// four secrets each by 8 parallel clients, and the measurement window runs until every StatefulSet exists
// and every Etcd reports its generation as observed (seen through watches, not polled lists: see
// burstWatch). The baseline of the same run is the time the
// apiserver took to create the burst's objects; the benchmark's own requests are counted on its client
// and taken out of the apiserver's counts.
package druid

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

const (
	creators = 8  // parallel clients creating the burst, like many Gardener shoot reconciles at once
	workers  = 10 // druid's --etcd-workers: a landscape with hundreds of Etcds raises the default of 3
)

func BenchmarkEtcdCreationBurst(b *testing.B) {
	log.SetLogger(logr.Discard())
	sizes, err := burstSizes()
	if err != nil {
		b.Fatal(err)
	}
	bin, err := druidBinary(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		var results []burst
		for _, n := range sizes {
			r := runBurst(b, bin, n)
			printBurst(r)
			results = append(results, r)
		}
		printTable(results)
		last := results[len(results)-1]
		b.ReportMetric(last.allStatefulSets.Seconds(), "s-to-all-statefulsets")
		b.ReportMetric(last.allStatefulSets.Seconds()/last.created.Seconds(), "x-creation-time")
		b.ReportMetric(last.controlPlaneCPUPerEtcdMs(), "ms-apiserver+etcd-CPU/etcd")
		b.ReportMetric(mib(last.druidPeakRSS), "MiB-druid-peak-RSS")
	}
}

func burstSizes() ([]int, error) {
	spec := os.Getenv("DRUID_BENCH_SIZES")
	if spec == "" {
		spec = "50,500,1000"
	}
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("DRUID_BENCH_SIZES=%q: %q is not a positive number of Etcds", spec, f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// burst is what one burst measured.
type burst struct {
	n               int
	created         time.Duration // the baseline: the apiserver creating the burst's objects
	allStatefulSets time.Duration
	allObserved     time.Duration // end of the window: every Etcd reports its generation as observed
	druidCPU        float64
	druidPeakRSS    uint64
	controlPlaneCPU float64 // kube-apiserver + etcd, CPU seconds in the window
	// settledCPU is kube-apiserver + etcd CPU seconds from the burst's start until settle after its end,
	// less the control plane's idle rate over that time (see settle).
	settledCPU float64
	requests   requestCounts
}

func (r burst) controlPlaneCPUPerEtcdMs() float64 { return r.controlPlaneCPU * 1000 / float64(r.n) }

func (r burst) settledCPUPerEtcdMs() float64 { return r.settledCPU * 1000 / float64(r.n) }

// settle is how long the control plane's CPU is measured on after a burst: the deferred work of the
// apiserver and etcd (garbage collection, bbolt commits) of a burst of about a second would otherwise fall
// outside its window and make it look cheaper per Etcd than a longer one. The idle rate, measured for as
// long right before the burst, is taken out.
const settle = 5 * time.Second

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// runBurst starts a control plane and druid, creates n Etcds at once and measures until all of them are
// reconciled.
func runBurst(b *testing.B, bin string, n int) burst {
	b.Helper()
	ctx := context.Background()
	// envtest's default service range is a /24: 254 ClusterIPs, fewer than one client Service per Etcd.
	env, err := envtest.Start(envtest.Options{APIServerFlags: map[string]string{"service-cluster-ip-range": "10.0.0.0/16"}, EtcdFlags: etcdFlags()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	apiserverPID, etcdPID, err := env.ControlPlanePIDs()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		b.Fatal(err)
	}
	druid, err := startDruidProcess(bin, kubeconfig, filepath.Join(dir, "druid.log"), workers)
	if err != nil {
		b.Fatal(err)
	}
	defer druid.stop()

	counting := newCountingTransport(nil)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // the benchmark's clients are not what is measured
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counting.next = rt; return counting })
	c, err := client.New(cfg, client.Options{Scheme: envtest.Scheme})
	if err != nil {
		b.Fatal(err)
	}

	// Warm-up: one Etcd reconciled proves that druid runs and has synced its caches.
	warmUpCtx, stopWarmUp := context.WithCancel(ctx)
	warmUp := mustWatch(b, warmUpCtx, cfg, "warm-up", 1)
	warmUp.begin()
	createBurst(b, ctx, c, "warm-up", 1)
	waitReconciled(b, druid, warmUp)
	stopWarmUp()

	namespace := fmt.Sprintf("burst-%d", n)
	// The watch is established before the window opens, so that its LIST and WATCH fall outside it.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch := mustWatch(b, watchCtx, cfg, namespace, n)
	ownBefore := counting.snapshot()
	metricsBefore, err := env.APIServerMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	controlPlaneCPU := func() float64 { return mustCPU(b, apiserverPID) + mustCPU(b, etcdPID) }
	idleFrom := controlPlaneCPU()
	time.Sleep(settle)
	cpuBefore := controlPlaneCPU()
	idleRate := (cpuBefore - idleFrom) / settle.Seconds()
	druidCPUBefore := mustCPU(b, druid.cmd.Process.Pid)

	waitProfiles, err := startProfiles(ctx, env, namespace)
	if err != nil {
		b.Fatal(err)
	}
	start := watch.begin()
	r := burst{n: n, created: createBurst(b, ctx, c, namespace, n)}
	r.allStatefulSets, r.allObserved = waitReconciled(b, druid, watch)

	r.controlPlaneCPU = controlPlaneCPU() - cpuBefore
	r.druidCPU = mustCPU(b, druid.cmd.Process.Pid) - druidCPUBefore
	if r.druidPeakRSS, err = peakRSSBytes(druid.cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	// The apiserver's metrics are read after the settled CPU, so that reading them is not counted; the
	// requests therefore include those of the settle time (druid's, if it is not idle yet).
	time.Sleep(settle - time.Since(start.Add(r.allObserved)))
	r.settledCPU = controlPlaneCPU() - cpuBefore - idleRate*time.Since(start).Seconds()
	metricsAfter, err := env.APIServerMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := waitProfiles(); err != nil {
		b.Fatal(err)
	}
	own := counting.snapshot().minus(ownBefore)
	r.requests = apiserverRequests(metricsAfter).minus(apiserverRequests(metricsBefore)).minus(own)
	return r
}

func mustCPU(b *testing.B, pid int) float64 {
	b.Helper()
	s, err := cpuSeconds(pid)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// createBurst creates the namespace and n Etcds with their secrets through creators parallel clients and
// returns how long that took.
func createBurst(b *testing.B, ctx context.Context, c client.Client, namespace string, n int) time.Duration {
	b.Helper()
	start := time.Now()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		b.Fatal(err)
	}
	var failed atomic.Value
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < creators; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				for _, obj := range objectsOf(namespace, i) {
					if err := c.Create(ctx, obj); err != nil {
						failed.Store(err)
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// mustWatch starts watching namespace for a burst of n Etcds; the watch ends with ctx.
func mustWatch(b *testing.B, ctx context.Context, cfg *rest.Config, namespace string, n int) *burstWatch {
	b.Helper()
	w, err := watchBurst(ctx, cfg, namespace, n)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// waitReconciled waits until the watched namespace has its n StatefulSets and its n Etcds report their
// generation as observed, and returns both times since the watch began.
func waitReconciled(b *testing.B, druid *druidProcess, w *burstWatch) (allStatefulSets, allObserved time.Duration) {
	b.Helper()
	const limit = 20 * time.Minute
	deadline := time.After(limit)
	check := time.NewTicker(time.Second)
	defer check.Stop()
	lastReport := time.Now()
	for {
		select {
		case <-w.done:
			return w.times()
		case <-deadline:
			statefulSets, observed := w.progress()
			b.Fatalf("after %s only %d of %d StatefulSets and %d observed Etcds; druid log %s", limit, statefulSets, w.n, observed, druid.logPath)
		case <-check.C:
			if err := druid.alive(); err != nil {
				b.Fatal(err)
			}
			if time.Since(lastReport) > 30*time.Second {
				statefulSets, observed := w.progress()
				fmt.Printf("  %d of %d StatefulSets, %d observed Etcds\n", statefulSets, w.n, observed)
				lastReport = time.Now()
			}
		}
	}
}

// objectsOf are the secrets and the Etcd of Etcd number i, secrets first as Gardener creates them.
func objectsOf(namespace string, i int) []client.Object {
	name := fmt.Sprintf("etcd-%03d", i)
	secretNamed := func(suffix string, keys ...string) *corev1.Secret {
		data := map[string][]byte{}
		for _, k := range keys {
			data[k] = []byte("benchmark data of " + k)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + suffix, Namespace: namespace}, Data: data}
	}
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main", "etcd": name},
			Replicas: 1,
			Etcd: druidv1alpha1.EtcdConfig{ClientUrlTLS: &druidv1alpha1.TLSConfig{
				TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: name + "-ca"}, DataKey: ptr.To("bundle.crt")},
				ServerTLSSecretRef: corev1.SecretReference{Name: name + "-server"},
				ClientTLSSecretRef: corev1.SecretReference{Name: name + "-client"},
			}},
			Backup: druidv1alpha1.BackupSpec{Store: &druidv1alpha1.StoreSpec{
				Prefix: name, Container: ptr.To("bucket"), Provider: ptr.To(druidv1alpha1.StorageProviderS3),
				SecretRef: &corev1.SecretReference{Name: name + "-backup"},
			}},
		},
	}
	return []client.Object{
		secretNamed("ca", "bundle.crt"), secretNamed("server", "tls.crt", "tls.key"), secretNamed("client", "tls.crt", "tls.key"),
		secretNamed("backup", "accessKeyID", "secretAccessKey", "region"), etcd,
	}
}

func printBurst(r burst) {
	total, notFound := r.requests.sum()
	fmt.Printf("%d Etcds: objects created in %.1fs (baseline), all StatefulSets after %.1fs (%.2fx the creation), all observed after %.1fs; "+
		"druid %.1f CPU-s, peak RSS %.0f MiB; apiserver+etcd %.1f CPU-s = %.0f ms/Etcd; %.1f requests/Etcd (%.1f answered 404):\n",
		r.n, r.created.Seconds(), r.allStatefulSets.Seconds(), r.allStatefulSets.Seconds()/r.created.Seconds(), r.allObserved.Seconds(),
		r.druidCPU, mib(r.druidPeakRSS), r.controlPlaneCPU, r.controlPlaneCPUPerEtcdMs(), total/float64(r.n), notFound/float64(r.n))
	for _, line := range r.requests.lines(r.n) {
		fmt.Println("    " + line)
	}
}

// printTable prints one row per burst; the per-Etcd cost of the larger bursts is compared with the first.
func printTable(results []burst) {
	fmt.Println()
	fmt.Printf("%6s %9s %9s %8s %8s %9s %11s %9s %11s %9s %8s %8s %8s %8s %8s\n", "Etcds", "create-s", "all-sts-s", "x-create",
		"druid-s", "RSS-MiB", "cp-ms/Etcd", "x-first", "settled-ms", "x-first", "req/Etcd", "GET", "LIST", "POST", "PATCH")
	first := results[0]
	for _, r := range results {
		total, _ := r.requests.sum()
		verbs := r.requests.perVerb()
		per := func(v string) float64 { return verbs[v] / float64(r.n) }
		fmt.Printf("%6d %9.1f %9.1f %8.2f %8.1f %9.0f %11.1f %9.2f %11.1f %9.2f %8.1f %8.1f %8.1f %8.1f %8.1f\n", r.n, r.created.Seconds(),
			r.allStatefulSets.Seconds(), r.allStatefulSets.Seconds()/r.created.Seconds(), r.druidCPU, mib(r.druidPeakRSS),
			r.controlPlaneCPUPerEtcdMs(), r.controlPlaneCPUPerEtcdMs()/first.controlPlaneCPUPerEtcdMs(),
			r.settledCPUPerEtcdMs(), r.settledCPUPerEtcdMs()/first.settledCPUPerEtcdMs(), total/float64(r.n),
			per("GET"), per("LIST"), per("POST"), per("PATCH")+per("APPLY"))
	}
	fmt.Println("(cp-ms/Etcd: kube-apiserver + etcd CPU per Etcd until every Etcd is observed; settled-ms: the same until 5s later, less the idle rate; x-first: relative to the first burst; x-create: time to all StatefulSets over the creation baseline)")
	printSizeMedians(results)
}

// printSizeMedians prints, for runs that repeat burst sizes (DRUID_BENCH_SIZES=50,1000,50,1000,...), the
// spread and the median of each size's control-plane CPU per Etcd, the median against the first size's.
// The CPU time of the same work varies by ±15–20 % between bursts on a shared VM: a slow and a fast
// burst of 1,000 had the same requests and the same mix of functions in kube-apiserver's and etcd's CPU
// profiles within 1 % (DRUID_BENCH_PROFILE_DIR), and bursts of 50 vary as much. Only alternating
// repetitions compare sizes.
func printSizeMedians(results []burst) {
	bySize := map[int][]float64{}
	var sizes []int
	for _, r := range results {
		if _, seen := bySize[r.n]; !seen {
			sizes = append(sizes, r.n)
		}
		bySize[r.n] = append(bySize[r.n], r.controlPlaneCPUPerEtcdMs())
	}
	if len(sizes) == len(results) {
		return
	}
	median := func(v []float64) float64 { return (v[(len(v)-1)/2] + v[len(v)/2]) / 2 }
	for _, v := range bySize {
		slices.Sort(v)
	}
	base := median(bySize[sizes[0]])
	fmt.Printf("\n%6s %6s %9s %12s %9s %9s\n", "Etcds", "runs", "min", "median cp-ms", "max", "x-first")
	for _, n := range sizes {
		v := bySize[n]
		fmt.Printf("%6d %6d %9.1f %12.1f %9.1f %9.2f\n", n, len(v), v[0], median(v), v[len(v)-1], median(v)/base)
	}
	fmt.Println("(cp-ms per Etcd of every burst of a size: its fastest, median and slowest; x-first: the median against the first size's)")
}
