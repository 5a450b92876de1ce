package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcdbrctl/app"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// runTool executes a one-shot subcommand of etcdbrctl in-process and returns stdout and its error.
func runTool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "etcdbrctl", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(app.ToolCommands()...)
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	return stdout.String(), root.ExecuteContext(t.Context())
}

// TestRestoreToRevisionCLI restores through `etcdbrctl restore --revision` (a revision inside a delta) and
// `--time` (the full snapshot's time) and compares real etcd members started on the results with the
// source at those revisions; bad or conflicting target flags are refused naming the flag, writing nothing.
func TestRestoreToRevisionCLI(t *testing.T) {
	loc := backuptest.LocalLocation(t)
	t.Setenv("HOME", loc.Home)
	src := etcdserver.Start(t).Members[0]
	cli := src.Client(t)
	fullTime := time.Unix(1_800_000_000, 0).UTC()
	clock := backuptest.NewClock(fullTime)
	fullRev := backuptest.Churn(t, cli, 0)
	s := backuptest.Backup(t, cli, loc.Open(t), clock, snapshot.CompressionGzip)
	inside := backuptest.Churn(t, cli, 1)
	backuptest.Churn(t, cli, 2)
	clock.Set(fullTime.Add(time.Hour))
	last := backuptest.TakeDelta(t, s).LastRevision
	s.Stop()

	restoreTo := func(t *testing.T, flag string, want int64) {
		t.Helper()
		dataDir := filepath.Join(t.TempDir(), "m0.etcd")
		peer := etcdserver.FreeURL(t)
		out := run(t, append(loc.Args(""), "restore", flag, "--data-dir="+dataDir, "--name=m0",
			"--initial-cluster=m0="+peer.String(), "--initial-advertise-peer-urls="+peer.String())...)
		var res struct{ Revision int64 }
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Revision != want {
			t.Fatalf("restore %s printed %q (%v), want revision %d", flag, out, err, want)
		}
		m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer})
		if diff := backuptest.Diff(backuptest.StateAt(t, cli, want), backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
			t.Fatalf("restored member differs from the source at revision %d:\n%v", want, diff)
		}
	}
	t.Run("revision inside a delta", func(t *testing.T) { restoreTo(t, "--revision="+strconv.FormatInt(inside, 10), inside) })
	t.Run("time of the full snapshot", func(t *testing.T) {
		restoreTo(t, "--time="+fullTime.Add(time.Minute).Format(time.RFC3339), fullRev)
	})

	for _, tc := range []struct {
		name     string
		flags    []string
		mentions []string
	}{
		{"revision and time", []string{"--revision=5", "--time=" + fullTime.Format(time.RFC3339)}, []string{"revision", "time"}},
		{"time not RFC3339", []string{"--time=yesterday"}, []string{"--time", "RFC3339"}},
		{"negative revision", []string{"--revision=-1"}, []string{"--revision"}},
		{"revision past the backups", []string{"--revision=" + strconv.FormatInt(last+1, 10)}, []string{"--revision", "newest stored revision " + strconv.FormatInt(last, 10)}},
		{"time before the backups", []string{"--time=" + fullTime.Add(-time.Hour).Format(time.RFC3339)}, []string{"--time", "before the oldest snapshot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			_, err := runTool(t, append(append(loc.Args(""), "restore", "--data-dir="+filepath.Join(parent, "m0.etcd")), tc.flags...)...)
			if err == nil {
				t.Fatal("restore succeeded, want a refusal")
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Fatalf("err = %v, want it to mention %q", err, m)
				}
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("a refused restore wrote %v", entries)
			}
		})
	}
}
