package druid

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// profileDir is where CPU profiles of kube-apiserver and etcd are written for every burst
// (DRUID_BENCH_PROFILE_DIR, unset: none), to find what a burst costs the control plane and why the
// cost per Etcd changes with the burst's size. Each profile covers DRUID_BENCH_PROFILE_SECONDS
// (default 30, at most 55: kube-apiserver ends requests after its 60 s request timeout) from the burst's
// start. Profiling costs the profiled processes a little CPU, inside the measured window.
func profileDir() string { return os.Getenv("DRUID_BENCH_PROFILE_DIR") }

const maxProfileSeconds = 55

func profileSeconds() int {
	if s, err := strconv.Atoi(os.Getenv("DRUID_BENCH_PROFILE_SECONDS")); err == nil && s > 0 {
		return min(s, maxProfileSeconds)
	}
	return 30
}

// etcdFlags turns on etcd's pprof endpoints when profiles are asked for.
func etcdFlags() map[string]string {
	if profileDir() == "" {
		return nil
	}
	return map[string]string{"enable-pprof": "true"}
}

// startProfiles fetches CPU profiles of kube-apiserver and etcd covering the next profileSeconds, named
// after the burst; wait returns once both are written.
func startProfiles(ctx context.Context, env *envtest.Env, name string) (wait func() error, err error) {
	dir := profileDir()
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	query := fmt.Sprintf("/debug/pprof/profile?seconds=%d", profileSeconds())
	etcdURL := strings.TrimSuffix(env.ControlPlane.Etcd.URL.String(), "/") + query
	targets := map[string]func(context.Context) (*http.Response, error){
		"apiserver": func(ctx context.Context) (*http.Response, error) { return env.APIServerGet(ctx, query, "") },
		"etcd":      func(ctx context.Context) (*http.Response, error) { return getOK(ctx, etcdURL) },
	}
	errs := make(chan error, len(targets))
	for component, get := range targets {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.pprof", name, component, time.Now().Format("150405")))
		go func() { errs <- writeProfile(ctx, get, path) }()
	}
	return func() error {
		var first error
		for range targets {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

// getOK GETs url; any status but 200 is an error.
func getOK(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("profiling %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("profiling %s: %s", url, resp.Status)
	}
	return resp, nil
}

// writeProfile writes the profile get answers to path.
func writeProfile(ctx context.Context, get func(context.Context) (*http.Response, error), path string) error {
	resp, err := get(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
