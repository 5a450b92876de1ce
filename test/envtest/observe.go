package envtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// APIServerMetrics reads the apiserver's own /metrics (as the administrator of Config) and parses them, so
// that benchmarks can count the requests the apiserver served (apiserver_request_total) before and after
// a run.
func (e *Env) APIServerMetrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	httpClient, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(e.Config.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the apiserver's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the apiserver's metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the apiserver's metrics: %w", err)
	}
	return families, nil
}

// ControlPlanePIDs returns the process ids of the running kube-apiserver and etcd, found by the
// directories envtest gave them (--cert-dir, --data-dir), so that benchmarks can read their CPU time from
// /proc. The parent-death wrapper execs the real binaries, so the ids are theirs.
func (e *Env) ControlPlanePIDs() (apiserver, etcd int, err error) {
	apiserverArg := "--cert-dir=" + e.Environment.ControlPlane.GetAPIServer().CertDir
	etcdArg := "--data-dir=" + e.Environment.ControlPlane.Etcd.DataDir
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	for _, entry := range entries {
		pid, convErr := strconv.Atoi(entry.Name())
		if convErr != nil {
			continue
		}
		cmdline, readErr := os.ReadFile(filepath.Join("/proc", entry.Name(), "cmdline"))
		if readErr != nil {
			continue // the process ended meanwhile
		}
		for _, arg := range strings.Split(string(cmdline), "\x00") {
			switch arg {
			case apiserverArg:
				apiserver = pid
			case etcdArg:
				etcd = pid
			}
		}
	}
	if apiserver == 0 || etcd == 0 {
		return 0, 0, fmt.Errorf("control plane processes not found in /proc (kube-apiserver %d with %s, etcd %d with %s)", apiserver, apiserverArg, etcd, etcdArg)
	}
	return apiserver, etcd, nil
}
