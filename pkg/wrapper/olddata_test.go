package wrapper

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// envOpenDataDir set to "1" makes a re-executed test binary read an etcd configuration (YAML) from its
// standard input and start etcd on it through startEtcd, the wrapper's own start path; it prints how many
// of oldetcd's keys it serves and exits (see init below). A child process, because etcd panics in its apply goroutine, which no recover
// in a test can catch.
const envOpenDataDir = "WRAPPER_TEST_OPEN_DATA_DIR_CONFIG"

// servedKeysLine starts the child's report: "served-keys=<n>".
const servedKeysLine = "served-keys="

func init() {
	if os.Getenv(envOpenDataDir) == "1" {
		config, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(openDataDir(config))
	}
}

func openDataDir(config []byte) int {
	cfg, err := loadConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := startEtcd(cfg, zap.NewExample())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, err)
		return 1
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd not ready after 30s")
		return 1
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cfg.ListenClientUrls[0].String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, oldetcd.KeyPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s%d\n", servedKeysLine, r.Count)
	return 0
}

// TestEmbeddedEtcdOnOldData shows why old data is stepped, through the wrapper's start path (embedded
// etcd 3.7): on a data directory written by etcd 3.5 (or 3.4) etcd panics while it applies the WAL
// ("proto: cannot parse invalid wire-format data": the old versions logged v2 requests, which 3.7 no longer
// decodes) — unless a raft snapshot covered every such entry before the switch. One run under 3.6
// without a snapshot does not help: the 3.5 entries stay in the WAL after its last snapshot. This is
// etcd's behaviour, which the initializer must keep the wrapper from (initializer.CheckDataVersion).
func TestEmbeddedEtcdOnOldData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts old etcd binaries and etcd 3.7 on their data: seconds per case")
	}
	for _, tc := range []struct {
		w oldetcd.Write
		// then36 runs etcd 3.6 on the directory once (default snapshot-count, no snapshot) and stops it
		// cleanly before etcd 3.7 opens it.
		then36 bool
		opens  bool
	}{
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Term}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}, then36: true},
		{w: oldetcd.Write{Version: "3.4", Keys: 20, Stop: oldetcd.Kill}},
		// More entries than --snapshot-count: etcd 3.5 took a snapshot after the last of its own v2 requests
		// (they are written while it starts), so etcd 3.7 replays only v3 requests.
		{w: oldetcd.Write{Version: "3.5", Keys: 120, SnapshotCount: 100, Stop: oldetcd.Kill}, opens: true},
	} {
		name := tc.w.String()
		if tc.then36 {
			name += ", then etcd 3.6"
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			m := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"), tc.w)
			if tc.then36 {
				s := oldetcd.ForTest(t, "3.6", m)
				g.Expect(s.Stop()).To(Succeed())
			}
			out, err := runEmbeddedOn(t, m)
			if tc.opens {
				g.Expect(err).NotTo(HaveOccurred(), out)
				g.Expect(out).To(ContainSubstring(fmt.Sprintf("%s%d\n", servedKeysLine, tc.w.Keys)))
				return
			}
			g.Expect(err).To(HaveOccurred(), "etcd 3.7 opened the directory: %s", out)
			g.Expect(out).To(ContainSubstring("cannot parse invalid wire-format data"))
			g.Expect(out).NotTo(ContainSubstring(servedKeysLine))
		})
	}
}

// runEmbeddedOn starts the re-executed test binary on m's directory (same name and URLs) and returns its
// output and exit error.
func runEmbeddedOn(t *testing.T, m oldetcd.Member) (string, error) {
	t.Helper()
	config, err := yaml.Marshal(map[string]any{
		"name": m.Name, "data-dir": m.DataDir,
		"listen-client-urls": m.ClientURL, "advertise-client-urls": m.ClientURL,
		"listen-peer-urls": m.PeerURL, "initial-advertise-peer-urls": m.PeerURL,
		"initial-cluster": m.InitialCluster(), "initial-cluster-state": "new",
	})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envOpenDataDir+"=1")
	cmd.Stdin = bytes.NewReader(config)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)) + "\n", err
}
