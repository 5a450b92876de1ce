package snapstore

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/swiftserver"
)

// BenchmarkSwiftSave compares Save of a 64 MiB snapshot (a static large object of 5 MiB segments, five
// uploading at a time) with the baseline of the same run: one plain PUT of the same bytes through
// gophercloud, which is what Swift costs without segmenting. It reports the time ratio and each side's
// peak heap growth. Best of two rounds, alternating, as the machine is noisy.
//
//	go test ./pkg/backuprestore/snapstore -run '^$' -bench BenchmarkSwiftSave -benchtime 1x
func BenchmarkSwiftSave(b *testing.B) {
	const size = 64 << 20
	srv := swiftserver.Start(b)
	srv.CreateContainer(b, "bench")
	secret := b.TempDir()
	for k, v := range map[string]string{"authURL": srv.AuthURL, "username": srv.User, "password": srv.Key} {
		if err := os.WriteFile(filepath.Join(secret, k), []byte(v), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	opened, err := New(b.Context(), Config{Provider: druidv1alpha1.StorageProviderSwift, Container: "bench", Prefix: "bench", SecretDir: secret}, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer opened.Close()
	store := opened.(*swiftStore)
	data, err := io.ReadAll(io.LimitReader(newGenerator(3), size))
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	measure := func(op func() error) (time.Duration, int64) {
		runtime.GC()
		base := heapObjects()
		sampler := startHeapSampler()
		start := time.Now()
		err := op()
		elapsed := time.Since(start)
		peak := sampler.Stop()
		if err != nil {
			b.Fatal(err)
		}
		return elapsed, int64(peak) - int64(base)
	}
	best := func(d, cur time.Duration) time.Duration {
		if cur == 0 || d < cur {
			return d
		}
		return cur
	}
	var putTime, saveTime time.Duration
	var putHeap, saveHeap int64
	snap := snapshot.NewFull(1, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	for range 2 {
		d, h := measure(func() error {
			_, err := objects.Create(b.Context(), store.client, "bench", "baseline", objects.CreateOpts{Content: bytes.NewReader(data)}).Extract()
			return err
		})
		putTime, putHeap = best(d, putTime), max(putHeap, h)
		d, h = measure(func() error { return store.Save(b.Context(), snap, bytes.NewReader(data)) })
		saveTime, saveHeap = best(d, saveTime), max(saveHeap, h)
	}
	mibs := func(d time.Duration) float64 { return float64(size>>20) / d.Seconds() }
	b.Logf("64 MiB: one plain PUT %s (%.0f MiB/s, peak heap +%.1f MiB); Save as SLO %s (%.0f MiB/s, peak heap +%.1f MiB); Save/PUT time ratio %.2f",
		putTime.Round(time.Millisecond), mibs(putTime), float64(putHeap)/(1<<20),
		saveTime.Round(time.Millisecond), mibs(saveTime), float64(saveHeap)/(1<<20), saveTime.Seconds()/putTime.Seconds())
	b.ReportMetric(saveTime.Seconds()/putTime.Seconds(), "save/put")
}
