//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/prometheusrules"
	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// scrapeInterval is how often the suite scrapes druid, and the step of the recorded series.
const scrapeInterval = 5 * time.Second

// druidRulesFile is the one copy of the alerting rules (the chart's PrometheusRule embeds it).
var druidRulesFile = filepath.Join("..", "..", "charts", "etcd-druid", "files", "prometheus-rules.yaml")

// scrapeDruid scrapes the /metrics endpoint of a running druid pod every scrapeInterval, as the chart's
// ServiceMonitor has Prometheus do, and records the per-Etcd series of namespace until the returned stop
// is called. A failed scrape leaves a gap, as it would in Prometheus.
func scrapeDruid(ctx context.Context, env *seedworkflow.Env, namespace string) (*prometheusrules.Recorder, func()) {
	pod, url := druidMetricsURL(ctx, env)
	r := &prometheusrules.Recorder{
		Interval: scrapeInterval,
		Keep: func(name string, labels map[string]string) bool {
			return strings.HasPrefix(name, "etcddruid_etcd_") && labels["namespace"] == namespace
		},
		ExtraLabels: map[string]string{"job": druid.Name, "pod": pod},
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(scrapeInterval)
		defer tick.Stop()
		for {
			if err := scrapeOnce(ctx, url, r); err != nil && ctx.Err() == nil {
				fmt.Fprintf(GinkgoWriter, "scrape of %s failed: %v\n", url, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return r, func() { cancel(); <-done }
}

func scrapeOnce(ctx context.Context, url string, r *prometheusrules.Recorder) error {
	ctx, cancel := context.WithTimeout(ctx, scrapeInterval)
	defer cancel()
	at := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return r.Scrape(at, resp.Body)
}

// druidMetricsURL is the name of a running druid pod and its metrics endpoint (the container port named
// metrics).
func druidMetricsURL(ctx context.Context, env *seedworkflow.Env) (string, string) {
	pods := &corev1.PodList{}
	Expect(env.Client.List(ctx, pods, client.InNamespace(seedworkflow.GardenNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": druid.Name})).To(Succeed())
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if port.Name == "metrics" {
					// The host scrapes in place of the seed's Prometheus, which Gardener's policies admit by label.
					allowFromSeedHost(ctx, env, seedworkflow.GardenNamespace, "allow-from-seed-host-to-druid-metrics",
						map[string]string{"app.kubernetes.io/name": druid.Name}, port.ContainerPort)
					return p.Name, "http://" + p.Status.PodIP + ":" + strconv.Itoa(int(port.ContainerPort)) + "/metrics"
				}
			}
		}
	}
	Fail("no running druid pod with a metrics port")
	return "", ""
}

// expectAlerts evaluates the chart's alerting rules on what r recorded with promtool (bin/promtool of
// `make tools`) and requires checks to hold.
func expectAlerts(r *prometheusrules.Recorder, checks []prometheusrules.AlertCheck) {
	promtool, err := childproc.FindBinary("promtool", "PROMTOOL")
	Expect(err).NotTo(HaveOccurred())
	rules, err := filepath.Abs(druidRulesFile)
	Expect(err).NotTo(HaveOccurred())
	test, err := r.UnitTest(rules, checks)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "recorded-alerts.yaml")
	Expect(os.WriteFile(path, test, 0o600)).To(Succeed())
	out, err := exec.Command(promtool, "test", "rules", path).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "promtool test rules on the scraped series:\n%s\n--- the test file:\n%s", out, test)
}
