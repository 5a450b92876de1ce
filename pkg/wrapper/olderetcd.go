package wrapper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-semver/semver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"sigs.k8s.io/yaml"
)

// olderEtcdStopTimeout bounds a clean stop of an older etcd (SIGTERM) before it is killed.
const olderEtcdStopTimeout = time.Minute

// olderEtcd is an older etcd server binary running as this member, as a child process, on the member's
// real configuration: same name, data directory, URLs and TLS, so that it serves clients and peers as
// the member did under the old wrapper. A step (stepThrough) changes only --snapshot-count, to 1: each
// applied entry is then followed by a raft snapshot, so that the WAL entries the next version does not
// apply leave what a restart replays as soon as the cluster writes again. A held etcd (runHeld) runs on
// the configuration as it is.
type olderEtcd struct {
	version string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // cmd.Wait's result, set before exited is closed
	client  *clientv3.Client
	// http and base reach the same listener for GET /version (the cluster version).
	http *http.Client
	base string
	dir  string
}

// startOlderEtcd starts the binary of s with childConfig, the member's configuration (YAML as the sidecar
// serves it, cfg loaded from it) as the caller adapted it. Its output goes to out.
func startOlderEtcd(s stepEtcd, childConfig []byte, cfg *embed.Config, o Options, out io.Writer) (*olderEtcd, error) {
	dir, err := os.MkdirTemp("", "etcd-wrapper-step-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "etcd.conf.yaml")
	if err := os.WriteFile(path, childConfig, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cli, err := localClient(cfg, o)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	endpoint, tlsConfig, err := localEndpoint(cfg, o)
	if err != nil {
		_ = cli.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig, transport.Proxy = tlsConfig, nil
	cmd := exec.Command(s.binary, "--config-file", path)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = withoutEtcdEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the wrapper
	if err := cmd.Start(); err != nil {
		_ = cli.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting etcd %s (%s): %w", s.version, s.binary, err)
	}
	e := &olderEtcd{version: s.version, cmd: cmd, exited: make(chan struct{}), client: cli, dir: dir,
		http: &http.Client{Transport: transport, Timeout: stepRequestTimeout}, base: endpoint.String()}
	go func() {
		e.err = cmd.Wait()
		close(e.exited)
	}()
	return e, nil
}

// ready: the older etcd answers its status and knows a leader, i.e. it has joined its cluster.
func (e *olderEtcd) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	eps := e.client.Endpoints()
	st, err := e.client.Status(ctx, eps[0])
	if err != nil {
		return err
	}
	if st.Header.GetMemberId() == 0 || st.Leader == 0 {
		return errors.New("etcd has no leader yet")
	}
	return nil
}

// clusterVersion is the cluster version this member has applied (GET /version's etcdcluster).
func (e *olderEtcd) clusterVersion(ctx context.Context) (*semver.Version, error) {
	v, err := versionsOf(ctx, e.http, e.base)
	if err != nil {
		return nil, err
	}
	return semver.NewVersion(v.Cluster)
}

// stop ends the older etcd with SIGTERM (etcd stops its server and then dies of the signal it handled:
// counted as clean), killing it after olderEtcdStopTimeout; it removes the configuration copy.
func (e *olderEtcd) stop() error {
	defer os.RemoveAll(e.dir)
	defer e.client.Close()
	defer e.http.CloseIdleConnections()
	select {
	case <-e.exited:
		return fmt.Errorf("etcd %s had exited: %v", e.version, e.err)
	default:
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(olderEtcdStopTimeout):
		_ = e.cmd.Process.Kill()
		<-e.exited
		return fmt.Errorf("etcd %s did not stop within %s after SIGTERM and was killed", e.version, olderEtcdStopTimeout)
	}
	if e.err != nil && !diedOfSIGTERM(e.cmd) {
		return fmt.Errorf("etcd %s did not stop cleanly: %w", e.version, e.err)
	}
	return nil
}

// diedOfSIGTERM tells whether the exited process ended by SIGTERM, as etcd does after a clean stop.
func diedOfSIGTERM(cmd *exec.Cmd) bool {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// withSnapshotCount returns the YAML configuration with snapshot-count replaced. Through JSON with
// numbers kept as written: a round trip through float64 would turn quota-backend-bytes into 8.589934592e+09,
// which etcd does not parse. etcd reads JSON as YAML.
func withSnapshotCount(config []byte, n int) ([]byte, error) {
	j, err := yaml.YAMLToJSON(config)
	if err != nil {
		return nil, fmt.Errorf("etcd configuration: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("etcd configuration: %w", err)
	}
	m["snapshot-count"] = n
	return json.Marshal(m)
}

// withoutEtcdEnv drops ETCD_* variables, so that the configuration file alone configures the child (etcd
// ignores them beside one, but says so in its log).
func withoutEtcdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD_") {
			out = append(out, kv)
		}
	}
	return out
}
