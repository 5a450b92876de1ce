package etcdserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// envProcessConfig carries a ProcessConfig (JSON) into a re-executed test binary: when it is set, the
// binary runs one etcd member instead of its tests (see init below).
const envProcessConfig = "ETCDSERVER_PROCESS_CONFIG"

// processReadyLine is printed by the child once etcd serves.
const processReadyLine = "etcdserver-process-ready"

// ProcessConfig describes a member run in its own process.
type ProcessConfig struct {
	Name, DataDir                string
	ClientURL, PeerURL           string
	InitialCluster, ClusterState string
	// BackendBatchInterval is etcd's --backend-batch-interval; a long one keeps recent writes only in the
	// WAL until something forces a backend commit (a snapshot, a clean stop), as a crash can leave them.
	BackendBatchInterval time.Duration
	// BackendBatchLimit is etcd's --backend-batch-limit (0: etcd's default).
	BackendBatchLimit int
}

// Process is a member running in a child process (the test binary re-executed), so that a test can kill
// it with SIGKILL the way a node failure or the OOM killer does: no clean shutdown, no final backend
// commit. Embedded members (StartMember) can only be closed cleanly.
type Process struct {
	Config ProcessConfig
	cmd    *exec.Cmd
	done   chan struct{}
}

// StartProcess starts a member in a child process and waits until it serves; it is killed when the test
// ends. Empty URLs are replaced by free 127.0.0.1 ports; an empty InitialCluster means this member alone.
func StartProcess(t testing.TB, cfg ProcessConfig) *Process {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	if cfg.ClientURL == "" {
		u := FreeURL(t)
		cfg.ClientURL = u.String()
	}
	if cfg.PeerURL == "" {
		u := FreeURL(t)
		cfg.PeerURL = u.String()
	}
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = cfg.Name + "=" + cfg.PeerURL
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envProcessConfig+"="+string(raw))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the etcd process: %v", err)
	}
	p := &Process{Config: cfg, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == processReadyLine {
				close(ready)
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("etcd process %s exited before it served", cfg.Name)
	case <-time.After(readyTimeout):
		p.Kill()
		t.Fatalf("etcd process %s not ready after %s", cfg.Name, readyTimeout)
	}
	return p
}

// Endpoint is the member's client URL.
func (p *Process) Endpoint() string { return p.Config.ClientURL }

// Kill sends SIGKILL and waits until the process is gone; killing twice is harmless.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// init turns a test binary started by StartProcess into the etcd member it describes. It runs before
// any test of the importing package, so no TestMain is needed.
func init() {
	raw := os.Getenv(envProcessConfig)
	if raw == "" {
		return
	}
	if err := runProcess(raw); err != nil {
		fmt.Fprintln(os.Stderr, "etcdserver process:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runProcess(raw string) error {
	var cfg ProcessConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return err
	}
	client, err := url.Parse(cfg.ClientURL)
	if err != nil {
		return err
	}
	peer, err := url.Parse(cfg.PeerURL)
	if err != nil {
		return err
	}
	ec := embed.NewConfig()
	ec.Name, ec.Dir = cfg.Name, cfg.DataDir
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	ec.InitialCluster, ec.InitialClusterToken = cfg.InitialCluster, "etcdserver-test"
	if cfg.ClusterState != "" {
		ec.ClusterState = cfg.ClusterState
	}
	if cfg.BackendBatchInterval > 0 {
		ec.BackendBatchInterval = cfg.BackendBatchInterval
	}
	if cfg.BackendBatchLimit > 0 {
		ec.BackendBatchLimit = cfg.BackendBatchLimit
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return err
	case <-time.After(readyTimeout):
		return fmt.Errorf("not ready after %s", readyTimeout)
	}
	fmt.Println(processReadyLine)
	return <-e.Err() // serves until killed
}
