package restorer_test

import (
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/benchproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// The sides of BenchmarkRestore that run an etcdbrctl binary, ours (built from the checkout) and upstream
// etcd-backup-restore's (`make tools-upstream`): `etcdbrctl restore` of the same store with the same
// flags, each timed from exec to exit, its CPU time and peak RSS from the kernel's accounting of the
// process. Their ratio compares the binaries as an operator runs them.
const (
	modeOursBinary = "etcdbrctl"
	modeUpstream   = "upstream-etcdbrctl"
)

// upstreamEtcdVersion is the etcd the binaries' store is backed up from, and the one that starts what
// they restored. Upstream's restorer goes through etcd 3.4's mvcc package, which accepts storage versions
// 3.4 and 3.5 only and panics on our etcd 3.7's snapshots (docs/compatibility.md): 3.5 is the newest etcd
// upstream restores, the one upstream's wrapper runs and ours holds beside upstream's sidecar.
const upstreamEtcdVersion = "3.5"

// etcd35Source is bin/etcd-3.5 without fsync; the benchmark fails without it (`make tools`).
var etcd35Source = benchSource{Name: "etcd" + upstreamEtcdVersion, Start: func(b *testing.B) *clientv3.Client {
	m := oldetcd.NewMember(b, filepath.Join(b.TempDir(), "source"))
	oldetcd.ForTest(b, upstreamEtcdVersion, m, "--unsafe-no-fsync", "--quota-backend-bytes=8589934592")
	return oldetcd.Client(b, m)
}}

// runBinaryRestoreVerified restores the workload's store with bin (a side above), then starts etcd 3.5 on
// the restored data directory and compares its keyspace (revision included) with the source's: a side
// that restored less, or could not read our backups, fails the benchmark.
func runBinaryRestoreVerified(b *testing.B, mode, bin string, w benchWorkload) benchResult {
	b.Helper()
	tmp := b.TempDir()
	m := oldetcd.NewMember(b, filepath.Join(tmp, "data"))
	args := []string{"restore", "--data-dir", m.DataDir, "--name", m.Name, "--initial-cluster", m.InitialCluster(),
		"--initial-advertise-peer-urls", m.PeerURL, "--initial-cluster-token", oldetcd.ClusterToken,
		// Both read the Local provider's containers below $HOME.
		"--storage-provider", "Local", "--store-container", benchContainer, "--store-prefix", benchPrefix}
	if mode == modeUpstream {
		// Upstream stages the snapshots it fetches in directories relative to its working directory
		// unless told otherwise.
		args = append(args, "--restoration-temp-snapshots-dir", filepath.Join(tmp, "restoration"), "--snapstore-temp-directory", tmp)
	}
	p, err := benchproc.Start(benchproc.Command{Binary: bin, Args: args, Env: []string{"HOME=" + w.Root}})
	if err != nil {
		b.Fatal(err)
	}
	u, err := p.Wait()
	if err != nil {
		b.Fatalf("%s: %v", mode, err)
	}
	srv, err := oldetcd.Start(upstreamEtcdVersion, m)
	if err != nil {
		b.Fatalf("%s: etcd %s on the restored data directory: %v", mode, upstreamEtcdVersion, err)
	}
	got := backuptest.StateAt(b, oldetcd.Client(b, m), 0)
	if err := srv.Stop(); err != nil {
		b.Fatal(err)
	}
	if diff := backuptest.Diff(w.Want, got); len(diff) > 0 {
		b.Fatalf("%s: restored keyspace differs from the source (%d differences):\n%s", mode, len(diff), strings.Join(diff[:min(len(diff), 20)], "\n"))
	}
	return benchResult{Mode: mode, Seconds: u.Seconds, CPUSeconds: u.CPUSeconds, Revisions: w.Stream.LastRevision() - w.Stream.Full.LastRevision,
		Final: got.Revision, Memory: benchproc.Peaks{RSS: u.PeakRSSMiB}}
}
