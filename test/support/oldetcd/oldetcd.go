// Package oldetcd runs the pinned old etcd servers (bin/etcd-3.4, bin/etcd-3.5 and bin/etcd-3.6, which
// `make tools` builds from hack/tools/etcd-<version>) as child processes, for the tests of etcd version
// stepping: they write a data directory the way a Gardener landscape's etcd did, or step one forward.
//
// The binaries are found through childproc.FindBinary, so a test skips under -short when `make tools`
// did not build them and fails without -short (docs/testing.md).
package oldetcd

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// Member is one etcd member's identity and data directory; every version runs it with the same flags.
type Member struct {
	Name, DataDir      string
	ClientURL, PeerURL string
	// Cluster is the --initial-cluster of a member of a larger cluster (NewCluster); empty: itself alone.
	Cluster string
}

// ClusterToken is the --initial-cluster-token of NewCluster's members.
const ClusterToken = "oldetcd-cluster"

// NewCluster is a cluster of n members named <name>-0 … <name>-<n-1> on free 127.0.0.1 ports, each with
// its data in a directory of its own below t's temporary directory.
func NewCluster(t testing.TB, name string, n int) []Member {
	t.Helper()
	members := make([]Member, n)
	var peers []string
	for i := range members {
		members[i] = NewMember(t, filepath.Join(t.TempDir(), "data"))
		members[i].Name = fmt.Sprintf("%s-%d", name, i)
		peers = append(peers, members[i].Name+"="+members[i].PeerURL)
	}
	for i := range members {
		members[i].Cluster = strings.Join(peers, ",")
	}
	return members
}

// ClientURLs are the members' client URLs.
func ClientURLs(members []Member) []string {
	var urls []string
	for _, m := range members {
		urls = append(urls, m.ClientURL)
	}
	return urls
}

// NewMember is a one-member cluster's member on free 127.0.0.1 ports, with its data in dataDir.
func NewMember(t testing.TB, dataDir string) Member {
	t.Helper()
	return Member{
		Name: "etcd-test-0", DataDir: dataDir,
		ClientURL: "http://" + freeport.Addr(t), PeerURL: "http://" + freeport.Addr(t),
	}
}

// InitialCluster is the member's --initial-cluster: its cluster's, or itself alone.
func (m Member) InitialCluster() string {
	if m.Cluster != "" {
		return m.Cluster
	}
	return m.Name + "=" + m.PeerURL
}

// Flags are the etcd flags that run the member.
func (m Member) Flags() []string {
	return []string{
		"--name", m.Name, "--data-dir", m.DataDir,
		"--listen-client-urls", m.ClientURL, "--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.PeerURL, "--initial-advertise-peer-urls", m.PeerURL,
		"--initial-cluster", m.InitialCluster(), "--initial-cluster-state", "new",
		"--initial-cluster-token", ClusterToken,
	}
}

// Binary is the path of bin/etcd-<version> (version "3.4", "3.5" or "3.6"), or $ETCD_<major>_<minor>_BINARY.
func Binary(version string) (string, error) {
	return childproc.FindBinary("etcd-"+version, "ETCD_"+strings.ReplaceAll(version, ".", "_")+"_BINARY")
}

// Server is an old etcd serving a member.
type Server struct {
	*childproc.Process
	Member  Member
	Version string
}

// Start runs etcd <version> as the member (extra flags are appended) and returns once it answers /health.
func Start(version string, m Member, extra ...string) (*Server, error) {
	bin, err := Binary(version)
	if err != nil {
		return nil, err
	}
	p, err := childproc.Start(childproc.Spec{
		Binary: bin, Args: append(m.Flags(), extra...),
		DropEnvPrefixes: []string{"ETCD_"},
		Ready:           childproc.HTTPReady(m.ClientURL+"/health", 200),
	})
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, Member: m, Version: version}, nil
}

// ForTest is Start for t: it skips under -short when the binary is missing, and stops the server when the
// test ends.
func ForTest(t testing.TB, version string, m Member, extra ...string) *Server {
	t.Helper()
	return childproc.ForTest(t, "etcd "+version, func() (*Server, error) { return Start(version, m, extra...) })
}

// Client is a client of the member's client URL, closed when the test ends.
func Client(t testing.TB, m Member) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// KeyPrefix is the prefix of the keys WriteDataDir writes.
const KeyPrefix = "/oldetcd/key/"

// Key is WriteDataDir's i-th key; its value is the key itself.
func Key(i int) string { return KeyPrefix + fmt.Sprintf("%06d", i) }

// Put writes keys [from, to) through the member's client URL, one request each (one raft entry each).
func Put(t testing.TB, m Member, from, to int) {
	t.Helper()
	cli := Client(t, m)
	for i := from; i < to; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cli.Put(ctx, Key(i), Key(i))
		cancel()
		if err != nil {
			t.Fatalf("put %s on etcd at %s: %v", Key(i), m.ClientURL, err)
		}
	}
}

// Stop is how WriteDataDir ends the old etcd.
type Stop int

const (
	// Kill is SIGKILL: a node failure, the OOM killer, a pod deleted with no grace.
	Kill Stop = iota
	// Term is SIGTERM: etcd's clean shutdown.
	Term
)

func (s Stop) String() string {
	if s == Term {
		return "SIGTERM"
	}
	return "SIGKILL"
}

// Write says how WriteDataDir writes a data directory.
type Write struct {
	// Version is the old etcd: "3.4", "3.5" or "3.6".
	Version string
	// Keys is how many keys are written, one raft entry each.
	Keys int
	// SnapshotCount is --snapshot-count; 0 keeps etcd's default (100000 in 3.4 and 3.5, 10000 since 3.6).
	SnapshotCount int
	// Stop ends the server.
	Stop Stop
}

func (w Write) String() string {
	sc := "default"
	if w.SnapshotCount > 0 {
		sc = strconv.Itoa(w.SnapshotCount)
	}
	return fmt.Sprintf("etcd %s, %d keys, snapshot-count %s, %s", w.Version, w.Keys, sc, w.Stop)
}

// WriteDataDir runs etcd w.Version as a fresh one-member cluster in dataDir, writes keys Key(0) …
// Key(w.Keys-1) and stops it as w.Stop says. The returned member runs the directory with any version.
func WriteDataDir(t testing.TB, dataDir string, w Write) Member {
	t.Helper()
	m := NewMember(t, dataDir)
	var extra []string
	if w.SnapshotCount > 0 {
		extra = append(extra, "--snapshot-count", strconv.Itoa(w.SnapshotCount))
	}
	s := ForTest(t, w.Version, m, extra...)
	Put(t, m, 0, w.Keys)
	if w.Stop == Term {
		if err := s.Stop(); err != nil {
			t.Fatalf("stopping etcd %s: %v", w.Version, err)
		}
	} else {
		s.Kill()
	}
	return m
}
