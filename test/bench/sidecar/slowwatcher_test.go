package sidecar

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
)

// slowWatcherGauge is etcd's count of watchers whose responses backed up (etcd then serves them from its
// database, at more cost, and at most 1,000 revisions per 100 ms), plus those that fell behind.
const slowWatcherGauge = "etcd_debugging_mvcc_slow_watcher_total"

// slowWatcherSampling is how often the phases read etcd's /metrics. A read costs etcd about 4 ms of CPU
// (some 170 KB of text) and this process its parsing: every 50 ms, that took several percent of the two
// cores from the writers, so it is read less often, and in every phase alike.
const slowWatcherSampling = 200 * time.Millisecond

// slowSamples counts the samples of a phase in which etcd had a slow watcher.
type slowSamples struct{ slow, samples int }

func (s slowSamples) add(o slowSamples) slowSamples {
	return slowSamples{slow: s.slow + o.slow, samples: s.samples + o.samples}
}

func (s slowSamples) String() string { return fmt.Sprintf("%d of %d", s.slow, s.samples) }

// sampleSlowWatchers reads etcd's slowWatcherGauge from its /metrics every slowWatcherSampling until the
// returned stop is called, which fails the benchmark when no sample could be read: a sampler that never
// reads would report no slow watcher.
func sampleSlowWatchers(b *testing.B, endpoint string) (stop func() slowSamples) {
	b.Helper()
	ctx, cancel := context.WithCancel(b.Context())
	var (
		wg      sync.WaitGroup
		counted slowSamples
		lastErr error
	)
	wg.Go(func() {
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			slow, err := slowWatchers(ctx, endpoint)
			if err != nil {
				lastErr = err
				return
			}
			counted.samples++
			if slow > 0 {
				counted.slow++
			}
		}, slowWatcherSampling)
	})
	return func() slowSamples {
		cancel()
		wg.Wait()
		if counted.samples == 0 {
			b.Fatalf("no sample of etcd's %s: %v", slowWatcherGauge, lastErr)
		}
		return counted
	}
}

// slowWatchers is the value of etcd's slowWatcherGauge.
func slowWatchers(ctx context.Context, endpoint string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, err
	}
	family, ok := families[slowWatcherGauge]
	if !ok || len(family.GetMetric()) == 0 {
		return 0, fmt.Errorf("etcd's metrics have no %s", slowWatcherGauge)
	}
	return family.GetMetric()[0].GetGauge().GetValue(), nil
}
