package app_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcdbrctl/app"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// runSurviving executes a surviving-data subcommand of etcdbrctl in-process, with its termination
// message written to a file of the test. It returns stdout and the command's error; stderr (the logs)
// is shown when the test fails. Every run checks that the termination message is what stdout says.
func runSurviving(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "etcdbrctl", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(app.SurvivingDataCommands()...)
	msg := filepath.Join(t.TempDir(), "termination-log")
	var stdout, stderr bytes.Buffer
	root.SetArgs(append(args, "--termination-message-path="+msg))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(t.Context())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("etcdbrctl %s stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	if err == nil {
		got, rerr := os.ReadFile(msg)
		if rerr != nil || string(got) != stdout.String() || strings.Count(stdout.String(), "\n") != 1 {
			t.Fatalf("termination message %q (%v) is not the one JSON line printed: %q", got, rerr, stdout.String())
		}
	}
	return stdout.String(), err
}

type revisionResult struct {
	Revision   int64    `json:"revision"`
	Valid      bool     `json:"valid"`
	Empty      bool     `json:"empty"`
	Reason     string   `json:"reason"`
	MovedAside []string `json:"movedAside"`
}

func dataRevision(t *testing.T, dataDir string, args ...string) revisionResult {
	t.Helper()
	out, err := runSurviving(t, append([]string{"data-revision", "--data-dir=" + dataDir, "--scratch-dir=" + t.TempDir()}, args...)...)
	if err != nil {
		t.Fatalf("data-revision %s: %v", dataDir, err)
	}
	var res revisionResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("data-revision printed %q: %v", out, err)
	}
	return res
}

// dirDigest hashes every path, mode and file content below dir: equal digests mean the directory was
// not modified.
func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", strings.TrimPrefix(p, dir), info.Mode(), info.Size())
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(h, f)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func putKeys(t *testing.T, cli *clientv3.Client, prefix string, n int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("%s%03d", prefix, i), strings.Repeat("v", 100))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

// crashImage leaves the data directory of a single member killed with SIGKILL whose database lags its
// WAL: 20 keys committed to the database, 20 more only in the WAL. It returns the directory, the
// revision etcd acknowledged last and the keys etcd served.
func crashImage(t *testing.T) (string, int64, backuptest.State) {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), "new.etcd")
	// A backend batch interval of an hour: only a snapshot commits the database before the kill.
	proc := etcdserver.StartProcess(t, etcdserver.ProcessConfig{DataDir: dataDir, BackendBatchInterval: time.Hour, BackendBatchLimit: 1 << 30})
	cli := etcdserver.NewClient(t, proc.Endpoint())
	putKeys(t, cli, "in-db/", 20)
	rc, err := cli.Snapshot(t.Context()) // a snapshot commits the database
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, rc)
	_ = rc.Close()
	last := putKeys(t, cli, "wal-only/", 20)
	want := backuptest.StateAt(t, cli, last)
	proc.Kill()
	if f := initializer.InspectDataDir(dataDir, "", true); !f.DataValid || !f.WALAhead || f.Revision >= last {
		t.Fatalf("precondition: the crash image's database should lag its WAL (valid %v, WAL ahead %v, database revision %d, acknowledged %d)",
			f.DataValid, f.WALAhead, f.Revision, last)
	}
	return dataDir, last, want
}

// stoppedClusterMember leaves the data directory of member 1 of a three-member cluster that was stopped
// (the quorum-loss recovery's volumes: a membership of three, the others gone), with the revision written
// last and the keys served.
func stoppedClusterMember(t *testing.T) (string, int64, backuptest.State) {
	t.Helper()
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	last := putKeys(t, cli, "cluster/", 30)
	want := backuptest.StateAt(t, cli, last)
	// Wait until member 1 has applied the last write, then stop everyone.
	if _, err := c.Members[1].Client(t).Get(t.Context(), "cluster/029"); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	return c.Members[1].Config.DataDir, last, want
}

func TestDataRevision(t *testing.T) {
	t.Run("stopped single member", func(t *testing.T) {
		m := etcdserver.Start(t).Members[0]
		last := putKeys(t, m.Client(t), "k/", 10)
		m.Stop()
		before := dirDigest(t, m.Config.DataDir)
		if got := dataRevision(t, m.Config.DataDir); !got.Valid || got.Revision != last {
			t.Fatalf("data-revision = %+v, want valid at revision %d", got, last)
		}
		if dirDigest(t, m.Config.DataDir) != before {
			t.Fatal("data-revision modified the data directory")
		}
	})
	t.Run("crash image: the WAL counts", func(t *testing.T) {
		dataDir, last, _ := crashImage(t)
		before := dirDigest(t, dataDir)
		if got := dataRevision(t, dataDir); !got.Valid || got.Revision != last {
			t.Fatalf("data-revision = %+v, want valid at the acknowledged revision %d (the database alone holds less)", got, last)
		}
		if dirDigest(t, dataDir) != before {
			t.Fatal("data-revision modified the data directory")
		}
	})
	t.Run("member of a stopped three-member cluster", func(t *testing.T) {
		dataDir, last, _ := stoppedClusterMember(t)
		before := dirDigest(t, dataDir)
		if got := dataRevision(t, dataDir); !got.Valid || got.Revision != last {
			t.Fatalf("data-revision = %+v, want valid at revision %d", got, last)
		}
		if dirDigest(t, dataDir) != before {
			t.Fatal("data-revision modified the data directory")
		}
	})
	t.Run("no valid data", func(t *testing.T) {
		corrupt := t.TempDir()
		for _, p := range []string{"member/wal/0000000000000000-0000000000000000.wal", "member/snap/db"} {
			if err := os.MkdirAll(filepath.Join(corrupt, filepath.Dir(p)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(corrupt, p), []byte("not etcd data"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for name, dir := range map[string]string{
			"missing": filepath.Join(t.TempDir(), "absent"), "empty": t.TempDir(), "corrupt": corrupt,
		} {
			got := dataRevision(t, dir)
			if got.Valid || got.Revision != 0 || got.Reason == "" {
				t.Errorf("%s: data-revision = %+v, want valid:false, revision 0 and a reason", name, got)
			}
			// Only a directory without member directory is empty: druid deletes it without asking, while
			// corrupt data stops the quorum-loss recovery.
			if wantEmpty := name != "corrupt"; got.Empty != wantEmpty {
				t.Errorf("%s: data-revision = %+v, want empty %v", name, got, wantEmpty)
			}
		}
	})
	t.Run("data of another Etcd is not valid", func(t *testing.T) {
		m := etcdserver.Start(t).Members[0]
		putKeys(t, m.Client(t), "k/", 3)
		m.Stop()
		if err := os.WriteFile(filepath.Join(m.Config.DataDir, "owner"), []byte("shoot--other/etcd-main\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := dataRevision(t, m.Config.DataDir, "--owner=shoot--mine/etcd-main"); got.Valid || got.Empty || !strings.Contains(got.Reason, "another Etcd") {
			t.Fatalf("data-revision of a foreign volume = %+v, want not valid, not empty, naming the owner", got)
		}
		if got := dataRevision(t, m.Config.DataDir, "--owner=shoot--other/etcd-main"); !got.Valid {
			t.Fatalf("data-revision of its own volume = %+v, want valid", got)
		}
	})
	t.Run("moved-aside data dirs are reported", func(t *testing.T) {
		volume := t.TempDir()
		dataDir := filepath.Join(volume, "new.etcd")
		aside := dataDir + ".invalid-20260102T150405Z"
		if err := os.MkdirAll(filepath.Join(aside, "member"), 0o700); err != nil {
			t.Fatal(err)
		}
		got := dataRevision(t, dataDir)
		if !got.Empty || len(got.MovedAside) != 1 || got.MovedAside[0] != aside {
			t.Fatalf("data-revision = %+v, want empty with the moved-aside dir %s", got, aside)
		}
	})
	t.Run("flags", func(t *testing.T) {
		if _, err := runSurviving(t, "data-revision", "--data-dir="+t.TempDir()); err == nil || !strings.Contains(err.Error(), "--scratch-dir") {
			t.Fatalf("without --scratch-dir: %v, want an error naming the flag", err)
		}
	})
}

type preserveResult struct {
	Revision int64  `json:"revision"`
	Snapshot string `json:"snapshot"`
	Uploaded bool   `json:"uploaded"`
}

func TestPreserveData(t *testing.T) {
	for _, tc := range []struct {
		name string
		loc  func(*testing.T) backuptest.Location
		data func(*testing.T) (string, int64, backuptest.State)
	}{
		{"Local/crash image", backuptest.LocalLocation, crashImage},
		{"S3/member of a stopped three-member cluster", backuptest.S3Location, stoppedClusterMember},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc := tc.loc(t)
			if loc.Home != "" {
				t.Setenv("HOME", loc.Home)
			}
			store := loc.Open(t)
			dataDir, last, want := tc.data(t)
			before := dirDigest(t, dataDir)
			preserve := func(expect int64) (preserveResult, error) {
				args := append(loc.Args(""), "preserve-data", "--data-dir="+dataDir, "--scratch-dir="+t.TempDir(),
					fmt.Sprintf("--expect-revision=%d", expect), "--compress-snapshots")
				out, err := runSurviving(t, args...)
				var res preserveResult
				if err == nil {
					if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
						t.Fatalf("preserve-data printed %q: %v", out, jerr)
					}
				}
				return res, err
			}
			listed := func() []*snapshot.Snapshot {
				snaps, err := store.List(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return snaps
			}

			if _, err := preserve(last - 1); err == nil || !strings.Contains(err.Error(), "--expect-revision") {
				t.Fatalf("with a wrong --expect-revision: %v, want a refusal naming the flag", err)
			}
			if snaps := listed(); len(snaps) != 0 {
				t.Fatalf("a refused preserve-data stored %v", snaps)
			}

			got, err := preserve(last)
			wantPrefix := fmt.Sprintf("Full-00000000-%08d-", last)
			if err != nil || !got.Uploaded || got.Revision != last || !strings.HasPrefix(got.Snapshot, wantPrefix) || !strings.HasSuffix(got.Snapshot, ".gz") {
				t.Fatalf("preserve-data = %+v, %v; want uploaded %s*.gz at revision %d", got, err, wantPrefix, last)
			}
			if snaps := listed(); len(snaps) != 1 || snaps[0].SnapName != got.Snapshot {
				t.Fatalf("store holds %v, want only %s", snaps, got.Snapshot)
			}

			again, err := preserve(last)
			if err != nil || again.Uploaded || again.Snapshot != got.Snapshot || again.Revision != last {
				t.Fatalf("re-run: %+v, %v; want nothing uploaded, naming %s", again, err, got.Snapshot)
			}
			if snaps := listed(); len(snaps) != 1 {
				t.Fatalf("after the re-run the store holds %v, want only %s", snaps, got.Snapshot)
			}
			if dirDigest(t, dataDir) != before {
				t.Fatal("preserve-data modified the data directory")
			}
			restoreAndCompare(t, loc, want)
		})
	}
}
