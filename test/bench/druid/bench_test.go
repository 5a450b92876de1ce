// Package druid benchmarks druid's Etcd controller at landscape scale on envtest: how long until every
// Etcd of a burst has its StatefulSet, and the controller's peak Go heap meanwhile.
//
// Run (not part of `go test`; the control plane only starts under -bench):
//
//	go test ./test/bench/druid/ -run x -bench BenchmarkEtcdCreationBurst -benchtime 1x -timeout 30m
//
// One iteration creates 50 Etcds (the scaling baseline) and then 500, each with its four secrets (client
// TLS CA, server and client certificates, S3 backup credentials), and reports for both bursts the time
// to create the objects (the apiserver's share, a baseline measured in the same run), the time until all
// StatefulSets exist, the peak heap, and the ratios 500/50 and "all StatefulSets"/"objects created".
package druid

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/secret"
	"github.com/gardener-etcd/gardener-etcd/test/envtest"
)

// controllerConfig is druid's default configuration apart from the workers, which a landscape with
// hundreds of Etcds raises.
var controllerConfig = config.EtcdController{
	Workers: 10,
	Images:  config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"},
}

const creators = 8 // parallel clients creating the burst, like many Gardener shoot reconciles at once

func BenchmarkEtcdCreationBurst(b *testing.B) {
	env, stop := startDruid(b)
	defer stop()
	largeN := 500
	if v, err := strconv.Atoi(os.Getenv("DRUID_BENCH_ETCDS")); err == nil && v > 0 {
		largeN = v
	}
	for i := 0; i < b.N; i++ {
		small := runBurst(b, env, fmt.Sprintf("bench-%d-small", i), largeN/10)
		printBurst(small)
		large := runBurst(b, env, fmt.Sprintf("bench-%d-large", i), largeN)
		printBurst(large)
		fmt.Printf("scaling %d vs %d: time %.1fx for 10x the Etcds, heap growth %.1fx\n", large.n, small.n,
			large.allStatefulSets.Seconds()/small.allStatefulSets.Seconds(), float64(large.peakHeap-large.idleHeap)/float64(max(small.peakHeap-small.idleHeap, 1)))
		b.ReportMetric(large.allStatefulSets.Seconds(), "s-to-all-statefulsets")
		b.ReportMetric(large.created.Seconds(), "s-to-create")
		b.ReportMetric(mib(large.peakHeap), "MiB-peak-heap")
		b.ReportMetric(large.allStatefulSets.Seconds()/small.allStatefulSets.Seconds(), "x-time-10x-etcds")
	}
}

func printBurst(r burst) {
	fmt.Printf("%4d Etcds: objects created in %6.1fs, all StatefulSets after %6.1fs (%.1fx the creation), %5.1f ms/Etcd, peak heap %6.1f MiB (%.1f MiB above the idle controller)\n",
		r.n, r.created.Seconds(), r.allStatefulSets.Seconds(), r.allStatefulSets.Seconds()/r.created.Seconds(),
		float64(r.allStatefulSets.Milliseconds())/float64(r.n), mib(r.peakHeap), mib(r.peakHeap-r.idleHeap))
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// startDruid starts envtest and a manager with the Etcd and secret finalizer controllers, as druid runs.
func startDruid(b *testing.B) (*envtest.Env, func()) {
	b.Helper()
	log.SetLogger(logr.Discard())
	// envtest's default service range is a /24: 254 ClusterIPs, fewer than one client Service per Etcd.
	env, err := envtest.Start(envtest.Options{APIServerFlags: map[string]string{"service-cluster-ip-range": "10.0.0.0/16"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(env.Config, etcdcontroller.NewManagerOptions(ctrl.Options{
		Scheme: envtest.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	}))
	if err == nil {
		err = etcdcontroller.AddToManager(ctx, mgr, controllerConfig)
	}
	if err == nil {
		err = secret.AddToManager(ctx, mgr, secret.Config{})
	}
	if err != nil {
		cancel()
		_ = env.Stop()
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	return env, func() { cancel(); <-done; _ = env.Stop() }
}

type burst struct {
	n               int
	created         time.Duration
	allStatefulSets time.Duration
	idleHeap        uint64
	peakHeap        uint64
}

// runBurst creates n Etcds with their secrets in a new namespace and waits until n StatefulSets exist.
func runBurst(b *testing.B, env *envtest.Env, namespace string, n int) burst {
	b.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	r := burst{n: n, idleHeap: heapBytes()}
	sampler := startHeapSampler()

	start := time.Now()
	var failed atomic.Value
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < creators; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				for _, obj := range objectsOf(namespace, i) {
					if err := env.Client.Create(ctx, obj); err != nil {
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
	r.created = time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}

	deadline := time.Now().Add(20 * time.Minute)
	lastReport := time.Now()
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSetList"))
		if err := env.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) == n {
			break
		}
		if time.Since(lastReport) > 30*time.Second {
			fmt.Printf("  %s: %d of %d StatefulSets after %s\n", namespace, len(list.Items), n, time.Since(start).Round(time.Second))
			describeLagging(ctx, env, namespace, list.Items)
			lastReport = time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d StatefulSets after 20 minutes", len(list.Items), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.allStatefulSets = time.Since(start)
	r.peakHeap = sampler.stop()
	return r
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

// heapSampler records the peak of the live heap objects every 20 ms.
type heapSampler struct {
	peak atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ticker := time.NewTicker(20 * time.Millisecond)
		defer ticker.Stop()
		for {
			if h := heapBytes(); h > s.peak.Load() {
				s.peak.Store(h)
			}
			select {
			case <-s.done:
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) stop() uint64 {
	close(s.done)
	s.wg.Wait()
	return s.peak.Load()
}

// heapBytes is the memory occupied by heap objects (live and not yet swept), as runtime/metrics reports it.
func heapBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// describeLagging prints the state of up to three Etcds that have no StatefulSet yet, to tell a slow
// controller from a stuck one.
func describeLagging(ctx context.Context, env *envtest.Env, namespace string, have []metav1.PartialObjectMetadata) {
	done := map[string]bool{}
	for _, m := range have {
		done[m.Name] = true
	}
	etcds := &druidv1alpha1.EtcdList{}
	if err := env.Client.List(ctx, etcds, client.InNamespace(namespace)); err != nil {
		fmt.Println("  listing Etcds:", err)
		return
	}
	shown := 0
	for _, e := range etcds.Items {
		if done[e.Name] || shown == 3 {
			continue
		}
		shown++
		fmt.Printf("    %s: finalizers %v, observedGeneration %v, lastOperation %+v, lastErrors %+v\n",
			e.Name, e.Finalizers, e.Status.ObservedGeneration, e.Status.LastOperation, e.Status.LastErrors)
	}
}
