// Package druid benchmarks etcd-druid at landscape scale on envtest, ours beside upstream etcd-druid
// v0.38.1 in the same run: bursts of Etcds created at once, and for each burst and druid how long until
// every Etcd has its StatefulSet, what druid spent (CPU, peak RSS) and what it cost the apiserver (requests
// by verb and resource from the apiserver's apiserver_request_total, and the CPU time of kube-apiserver and
// etcd). The comparison prints each figure as ours/upstream.
//
// Run (not part of `go test`; the control plane only starts under -bench):
//
//	make tools-upstream
//	go test ./test/bench/druid/ -run '^$' -bench BenchmarkEtcdCreationBurst -benchtime 1x -timeout 60m
//
// DRUID_BENCH_SIZES sets the bursts (default "50,500,1000"; repeat sizes, e.g. "50,1000,50,1000", for the
// medians per size: the druids then take turns going first); DRUID_BENCH_BINARY runs a druid built
// elsewhere (e.g. from main) as ours instead of building cmd/etcd-druid of this checkout;
// UPSTREAM_ETCD_DRUID_BIN runs another upstream binary than bin/upstream-etcd-druid (without one, our
// bursts run and the benchmark fails naming `make tools-upstream`); DRUID_BENCH_PROFILE_DIR writes CPU
// profiles of kube-apiserver and etcd for every burst.
//
// Every burst gets a fresh control plane and a fresh druid process, so that the figures of one burst do
// not carry the objects or the memory of the previous one. druid runs as its own process (found through
// $KUBECONFIG, leader election off, 10 Etcd workers), so that its CPU time and RSS are its own. One Etcd
// is reconciled first (warm-up, and proof that druid runs); then the burst's Etcds are created with their
// four secrets each by 8 parallel clients, and the measurement window runs until every StatefulSet exists
// and every Etcd reports its generation as observed (seen through watches, not polled lists: see
// burstWatch). The baseline of the same run is the time the
// apiserver took to create the burst's objects; the benchmark's own requests are counted on its client
// and taken out of the apiserver's counts. Its own creates also cost the control plane CPU: after each
// size's bursts the same burst is created once more with no druid running (runCreationAlone), and each
// druid's share is its settled CPU less that.
package druid

import (
	"context"
	"fmt"
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
	ours, err := ourDruid(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	upstream, err := upstreamDruid()
	druids := []druidUnderTest{ours, upstream}
	if err != nil {
		b.Error(err) // ours still runs; the benchmark fails
		druids = druids[:1]
	}
	for i := 0; i < b.N; i++ {
		var results []burst
		creationAlone := map[int][]float64{}
		for k, n := range sizes {
			for _, d := range turnOrder(druids, sizes, k) {
				r := runBurst(b, d, n)
				printBurst(r)
				results = append(results, r)
			}
			ms := runCreationAlone(b, n)
			fmt.Printf("no druid, %d Etcds (for the bursts of %d): creating them costs apiserver+etcd %.1f ms/Etcd (settled)\n", max(n, minCreationSample), n, ms)
			creationAlone[n] = append(creationAlone[n], ms)
		}
		printTable(results)
		printSizeMedians(results)
		last := sizes[len(sizes)-1]
		ourLast := medianOf(results, "ours", last)
		b.ReportMetric(ourLast.allStatefulSets, "s-to-all-statefulsets")
		b.ReportMetric(ourLast.controlPlaneCPUPerEtcdMs, "ms-apiserver+etcd-CPU/etcd")
		b.ReportMetric(ourLast.druidPeakRSSMiB, "MiB-druid-peak-RSS")
		b.ReportMetric(ourLast.requestsPerEtcd, "requests/etcd")
		if len(druids) == 2 {
			ratios := printComparison(results, sizes, creationAlone)
			b.ReportMetric(ratios[last].requestsPerEtcd, "x-upstream-requests/etcd")
			b.ReportMetric(ratios[last].controlPlaneCPUPerEtcdMs, "x-upstream-apiserver+etcd-CPU/etcd")
			b.ReportMetric(ratios[last].druidsShareMs, "x-upstream-druids-apiserver+etcd-CPU/etcd")
		}
	}
}

// turnOrder is the order in which the druids run the burst of sizes[k]: ours first at a size's first,
// third, … occurrence, upstream first at its second, fourth, …, so that repeating sizes
// (DRUID_BENCH_SIZES=50,50) cancels out what running first or second does to a burst (a machine warming
// up or filling its page cache).
func turnOrder(druids []druidUnderTest, sizes []int, k int) []druidUnderTest {
	occurrence := 0
	for _, n := range sizes[:k] {
		if n == sizes[k] {
			occurrence++
		}
	}
	if occurrence%2 == 0 {
		return druids
	}
	return []druidUnderTest{druids[len(druids)-1], druids[0]}[:len(druids)]
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
	druid           string // druidUnderTest.name
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
func runBurst(b *testing.B, d druidUnderTest, n int) burst {
	b.Helper()
	ctx := context.Background()
	p := startControlPlane(b)
	defer p.stop()
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, p.env.KubeConfig, 0o600); err != nil {
		b.Fatal(err)
	}
	druid, err := startDruidProcess(d, kubeconfig, filepath.Join(dir, "druid.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer druid.stop()

	// Warm-up: one Etcd reconciled proves that druid runs and has synced its caches.
	warmUpCtx, stopWarmUp := context.WithCancel(ctx)
	warmUp := mustWatch(b, warmUpCtx, p.cfg, "warm-up", 1)
	warmUp.begin()
	createBurst(b, ctx, p.client, "warm-up", 1)
	waitReconciled(b, druid, warmUp)
	stopWarmUp()

	namespace := burstNamespace(n)
	// The watch is established before the window opens, so that its LIST and WATCH fall outside it.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch := mustWatch(b, watchCtx, p.cfg, namespace, n)
	ownBefore := p.counting.snapshot()
	metricsBefore, err := p.env.APIServerMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cpuBefore, idleRate := p.idle(b)
	druidCPUBefore := mustCPU(b, druid.cmd.Process.Pid)

	waitProfiles, err := startProfiles(ctx, p.env, namespace)
	if err != nil {
		b.Fatal(err)
	}
	start := watch.begin()
	r := burst{druid: d.name, n: n, created: createBurst(b, ctx, p.client, namespace, n)}
	r.allStatefulSets, r.allObserved = waitReconciled(b, druid, watch)

	r.controlPlaneCPU = p.cpu(b) - cpuBefore
	r.druidCPU = mustCPU(b, druid.cmd.Process.Pid) - druidCPUBefore
	if r.druidPeakRSS, err = peakRSSBytes(druid.cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	// The apiserver's metrics are read after the settled CPU, so that reading them is not counted; the
	// requests therefore include those of the settle time (druid's, if it is not idle yet).
	time.Sleep(settle - time.Since(start.Add(r.allObserved)))
	r.settledCPU = p.cpu(b) - cpuBefore - idleRate*time.Since(start).Seconds()
	metricsAfter, err := p.env.APIServerMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := waitProfiles(); err != nil {
		b.Fatal(err)
	}
	own := p.counting.snapshot().minus(ownBefore)
	r.requests = apiserverRequests(metricsAfter).minus(apiserverRequests(metricsBefore)).minus(own)
	return r
}

func burstNamespace(n int) string { return fmt.Sprintf("burst-%d", n) }

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
	fmt.Printf("%s druid, %d Etcds: objects created in %.1fs (baseline), all StatefulSets after %.1fs (%.2fx the creation), all observed after %.1fs; "+
		"druid %.1f CPU-s, peak RSS %.0f MiB; apiserver+etcd %.1f CPU-s = %.0f ms/Etcd; %.1f requests/Etcd (%.1f answered 404):\n",
		r.druid, r.n, r.created.Seconds(), r.allStatefulSets.Seconds(), r.allStatefulSets.Seconds()/r.created.Seconds(), r.allObserved.Seconds(),
		r.druidCPU, mib(r.druidPeakRSS), r.controlPlaneCPU, r.controlPlaneCPUPerEtcdMs(), total/float64(r.n), notFound/float64(r.n))
	for _, line := range r.requests.lines(r.n) {
		fmt.Println("    " + line)
	}
}

// printTable prints one row per burst; the per-Etcd cost of the larger bursts is compared with the same
// druid's first burst.
func printTable(results []burst) {
	fmt.Println()
	fmt.Printf("%-9s %6s %9s %9s %8s %8s %9s %11s %9s %11s %9s %8s %8s %8s %8s %8s\n", "druid", "Etcds", "create-s", "all-sts-s", "x-create",
		"druid-s", "RSS-MiB", "cp-ms/Etcd", "x-first", "settled-ms", "x-first", "req/Etcd", "GET", "LIST", "POST", "PATCH")
	first := map[string]burst{}
	for _, r := range results {
		if _, ok := first[r.druid]; !ok {
			first[r.druid] = r
		}
		f := first[r.druid]
		total, _ := r.requests.sum()
		verbs := r.requests.perVerb()
		per := func(v string) float64 { return verbs[v] / float64(r.n) }
		fmt.Printf("%-9s %6d %9.1f %9.1f %8.2f %8.1f %9.0f %11.1f %9.2f %11.1f %9.2f %8.1f %8.1f %8.1f %8.1f %8.1f\n", r.druid, r.n, r.created.Seconds(),
			r.allStatefulSets.Seconds(), r.allStatefulSets.Seconds()/r.created.Seconds(), r.druidCPU, mib(r.druidPeakRSS),
			r.controlPlaneCPUPerEtcdMs(), r.controlPlaneCPUPerEtcdMs()/f.controlPlaneCPUPerEtcdMs(),
			r.settledCPUPerEtcdMs(), r.settledCPUPerEtcdMs()/f.settledCPUPerEtcdMs(), total/float64(r.n),
			per("GET"), per("LIST"), per("POST"), per("PATCH")+per("APPLY"))
	}
	fmt.Println("(cp-ms/Etcd: kube-apiserver + etcd CPU per Etcd until every Etcd is observed; settled-ms: the same until 5s later, less the idle rate; x-first: relative to the same druid's first burst; x-create: time to all StatefulSets over the creation baseline)")
}

// burstFigures are the figures the comparison reads from a burst, or their medians over the bursts of a
// druid and size.
type burstFigures struct {
	allStatefulSets          float64 // s
	druidCPU                 float64 // s
	druidPeakRSSMiB          float64
	controlPlaneCPUPerEtcdMs float64
	settledCPUPerEtcdMs      float64
	requestsPerEtcd          float64
	// druidsShareMs is settledCPUPerEtcdMs less what creating the burst cost with no druid running (see
	// runCreationAlone); set by printComparison.
	druidsShareMs float64
}

func figuresOf(r burst) burstFigures {
	total, _ := r.requests.sum()
	return burstFigures{allStatefulSets: r.allStatefulSets.Seconds(), druidCPU: r.druidCPU, druidPeakRSSMiB: mib(r.druidPeakRSS),
		controlPlaneCPUPerEtcdMs: r.controlPlaneCPUPerEtcdMs(), settledCPUPerEtcdMs: r.settledCPUPerEtcdMs(), requestsPerEtcd: total / float64(r.n)}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
}

// medianOf is the median of every figure over the bursts of druid at size n (each figure on its own).
func medianOf(results []burst, druid string, n int) burstFigures {
	var all []burstFigures
	for _, r := range results {
		if r.druid == druid && r.n == n {
			all = append(all, figuresOf(r))
		}
	}
	if len(all) == 0 {
		return burstFigures{}
	}
	of := func(f func(burstFigures) float64) float64 {
		v := make([]float64, len(all))
		for i, x := range all {
			v[i] = f(x)
		}
		return median(v)
	}
	return burstFigures{
		allStatefulSets:          of(func(x burstFigures) float64 { return x.allStatefulSets }),
		druidCPU:                 of(func(x burstFigures) float64 { return x.druidCPU }),
		druidPeakRSSMiB:          of(func(x burstFigures) float64 { return x.druidPeakRSSMiB }),
		controlPlaneCPUPerEtcdMs: of(func(x burstFigures) float64 { return x.controlPlaneCPUPerEtcdMs }),
		settledCPUPerEtcdMs:      of(func(x burstFigures) float64 { return x.settledCPUPerEtcdMs }),
		requestsPerEtcd:          of(func(x burstFigures) float64 { return x.requestsPerEtcd }),
	}
}

// printComparison prints, per burst size, our druid's figures against upstream's of the same run (medians
// when the size repeats) and returns the ratios ours/upstream by size: below 1 is cheaper or faster.
// creationAlone holds, per size, the settled CPU per Etcd of creating the burst with no druid
// (runCreationAlone); its median is taken out of both druids' settled figures for their share.
func printComparison(results []burst, sizes []int, creationAlone map[int][]float64) map[int]burstFigures {
	ratios := map[int]burstFigures{}
	fmt.Printf("\nours/upstream (etcd-druid v0.38.1), medians per size:\n%6s %5s %17s %17s %17s %17s %17s %17s %9s %17s\n", "Etcds", "runs",
		"all-sts-s", "druid-CPU-s", "peak-RSS-MiB", "cp-ms/Etcd", "settled-ms/Etcd", "req/Etcd", "create-ms", "druids-ms/Etcd")
	for _, n := range uniqueSizes(sizes) {
		ours, upstream := medianOf(results, "ours", n), medianOf(results, "upstream", n)
		creation := median(creationAlone[n])
		ours.druidsShareMs, upstream.druidsShareMs = ours.settledCPUPerEtcdMs-creation, upstream.settledCPUPerEtcdMs-creation
		runs := 0
		for _, r := range results {
			if r.n == n && r.druid == "ours" {
				runs++
			}
		}
		cell := func(o, u float64) string { return fmt.Sprintf("%.1f/%.1f=%.2f", o, u, o/u) }
		r := burstFigures{
			allStatefulSets: ours.allStatefulSets / upstream.allStatefulSets, druidCPU: ours.druidCPU / upstream.druidCPU,
			druidPeakRSSMiB: ours.druidPeakRSSMiB / upstream.druidPeakRSSMiB, controlPlaneCPUPerEtcdMs: ours.controlPlaneCPUPerEtcdMs / upstream.controlPlaneCPUPerEtcdMs,
			settledCPUPerEtcdMs: ours.settledCPUPerEtcdMs / upstream.settledCPUPerEtcdMs, requestsPerEtcd: ours.requestsPerEtcd / upstream.requestsPerEtcd,
			druidsShareMs: ours.druidsShareMs / upstream.druidsShareMs,
		}
		ratios[n] = r
		fmt.Printf("%6d %5d %17s %17s %17s %17s %17s %17s %9.1f %17s\n", n, runs, cell(ours.allStatefulSets, upstream.allStatefulSets),
			cell(ours.druidCPU, upstream.druidCPU), cell(ours.druidPeakRSSMiB, upstream.druidPeakRSSMiB),
			cell(ours.controlPlaneCPUPerEtcdMs, upstream.controlPlaneCPUPerEtcdMs), cell(ours.settledCPUPerEtcdMs, upstream.settledCPUPerEtcdMs),
			cell(ours.requestsPerEtcd, upstream.requestsPerEtcd), creation, cell(ours.druidsShareMs, upstream.druidsShareMs))
	}
	fmt.Println("(each cell ours/upstream=ratio; below 1: ours is faster or cheaper. Both druids run on the same binaries of kube-apiserver and etcd, a fresh control plane per burst, in alternating order when a size repeats;" +
		" create-ms: the benchmark creating the burst with no druid running, settled apiserver+etcd CPU per Etcd (median); druids-ms/Etcd: settled-ms/Etcd less create-ms, what the druid cost the control plane)")
	return ratios
}

func uniqueSizes(sizes []int) []int {
	var out []int
	for _, n := range sizes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// printSizeMedians prints, for runs that repeat burst sizes (DRUID_BENCH_SIZES=50,1000,50,1000,...), the
// spread and the median of each druid's and size's control-plane CPU per Etcd, the median against the
// druid's first size's. The CPU time of the same work varies by ±15–20 % between bursts on a shared VM: a
// slow and a fast burst of 1,000 had the same requests and the same mix of functions in kube-apiserver's
// and etcd's CPU profiles within 1 % (DRUID_BENCH_PROFILE_DIR), and bursts of 50 vary as much. Only
// alternating repetitions compare sizes.
func printSizeMedians(results []burst) {
	type key struct {
		druid string
		n     int
	}
	byKey := map[key][]float64{}
	var keys []key
	for _, r := range results {
		k := key{r.druid, r.n}
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r.controlPlaneCPUPerEtcdMs())
	}
	if len(keys) == len(results) {
		return
	}
	base := map[string]float64{}
	fmt.Printf("\n%-9s %6s %6s %9s %12s %9s %9s\n", "druid", "Etcds", "runs", "min", "median cp-ms", "max", "x-first")
	for _, k := range keys {
		v := slices.Clone(byKey[k])
		slices.Sort(v)
		if _, ok := base[k.druid]; !ok {
			base[k.druid] = median(v)
		}
		fmt.Printf("%-9s %6d %6d %9.1f %12.1f %9.1f %9.2f\n", k.druid, k.n, len(v), v[0], median(v), v[len(v)-1], median(v)/base[k.druid])
	}
	fmt.Println("(cp-ms per Etcd of every burst of a druid and size: its fastest, median and slowest; x-first: the median against the druid's first size's)")
}
