package etcdserver

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// readyTimeout bounds the wait for a member to join a cluster with a leader; a busy 2-core machine
// starting three members at once needs a few seconds, a broken configuration never gets there.
const readyTimeout = 60 * time.Second

// MemberConfig describes one member. Zero URLs are replaced by free 127.0.0.1 ports.
type MemberConfig struct {
	// Name is the member name; it must match its entry in InitialCluster.
	Name string
	// DataDir is the member's data directory; empty means a fresh temporary directory of the test.
	// A restored data directory (see package restorer) is started by passing it here.
	DataDir string
	// ClientURL and PeerURL are listened on and advertised.
	ClientURL, PeerURL url.URL
	// InitialCluster is "name=peerURL,..."; empty means this member alone.
	InitialCluster string
	// ClusterState is "new" (default) or "existing".
	ClusterState string
	// Configure may adjust the embed configuration further (e.g. auto-compaction, quotas).
	Configure func(*embed.Config)
}

// Member is a running embedded etcd server.
type Member struct {
	// Config is the configuration it was started with (URLs filled in).
	Config MemberConfig
	// Etcd is the embedded server, for tests that need server internals.
	Etcd *embed.Etcd

	stopped bool
}

// StartMember starts one member and waits until it is ready (has a leader and serves clients); it is
// stopped when the test ends. Multi-member clusters are started with StartCluster, whose members must
// start concurrently to elect a leader.
func StartMember(t testing.TB, cfg MemberConfig) *Member {
	t.Helper()
	m, err := startMember(t, cfg)
	if err != nil {
		t.Fatalf("starting etcd member %s: %v", cfg.Name, err)
	}
	if err := m.waitReady(); err != nil {
		m.Stop()
		t.Fatalf("etcd member %s: %v", cfg.Name, err)
	}
	return m
}

// startMember starts the server without waiting for it to be ready.
func startMember(t testing.TB, cfg MemberConfig) (*Member, error) {
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.ClientURL.Host == "" {
		cfg.ClientURL = FreeURL(t)
	}
	if cfg.PeerURL.Host == "" {
		cfg.PeerURL = FreeURL(t)
	}
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, cfg.PeerURL.String())
	}
	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = cfg.DataDir
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{cfg.ClientURL}, []url.URL{cfg.ClientURL}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{cfg.PeerURL}, []url.URL{cfg.PeerURL}
	ec.InitialCluster = cfg.InitialCluster
	ec.InitialClusterToken = "etcdserver-test"
	if cfg.ClusterState != "" {
		ec.ClusterState = cfg.ClusterState
	}
	// Shutdown makes etcd log "errors" about closed listeners; tests judge etcd by behaviour instead.
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	if cfg.Configure != nil {
		cfg.Configure(ec)
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, err
	}
	m := &Member{Config: cfg, Etcd: e}
	t.Cleanup(m.Stop)
	return m, nil
}

func (m *Member) waitReady() error {
	select {
	case <-m.Etcd.Server.ReadyNotify():
		return nil
	case err := <-m.Etcd.Err():
		return fmt.Errorf("failed while starting: %w", err)
	case <-time.After(readyTimeout):
		return fmt.Errorf("not ready after %s", readyTimeout)
	}
}

// Endpoint is the client URL, e.g. http://127.0.0.1:34567.
func (m *Member) Endpoint() string {
	return m.Config.ClientURL.String()
}

// Client opens a client to this member only; it is closed when the test ends.
func (m *Member) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	return NewClient(t, m.Endpoint())
}

// Stop stops the server and releases its ports; the data directory stays (it is a test temp dir).
// Stopping twice is harmless, so tests may stop members early (e.g. to kill a leader).
func (m *Member) Stop() {
	if m.stopped {
		return
	}
	m.stopped = true
	m.Etcd.Close()
}

// NewClient opens a client to the given endpoints and closes it when the test ends.
func NewClient(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client for %s: %v", strings.Join(endpoints, ","), err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// FreeURL returns http://127.0.0.1:<port> for a port reserved for this test binary (package freeport).
func FreeURL(t testing.TB) url.URL {
	t.Helper()
	return url.URL{Scheme: "http", Host: freeport.Addr(t)}
}
