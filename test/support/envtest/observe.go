package envtest

import (
	"context"
	"fmt"
	"io"
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

// APIServerGet GETs path (e.g. /metrics, or a resource's URL for its Table) from the apiserver as the
// administrator of Config, with accept as the Accept header unless empty. Any status but 200 is an error
// carrying the start of the body; the caller closes the body of the response.
func (e *Env) APIServerGet(ctx context.Context, path, accept string) (*http.Response, error) {
	httpClient, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(e.Config.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return resp, nil
}

// APIServerMetrics reads the apiserver's own /metrics (as the administrator of Config) and parses them, so
// that benchmarks can count the requests the apiserver served (apiserver_request_total) before and after
// a run.
func (e *Env) APIServerMetrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	resp, err := e.APIServerGet(ctx, "/metrics", "")
	if err != nil {
		return nil, fmt.Errorf("reading the apiserver's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
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
