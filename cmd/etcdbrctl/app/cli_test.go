package app_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcdbrctl/app"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// run executes etcdbrctl with args in-process and returns stdout; stderr (the logs) is shown on failure.
func run(t *testing.T, args ...string) string {
	t.Helper()
	root := &cobra.Command{Use: "etcdbrctl", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(app.ToolCommands()...)
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("etcdbrctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// backedUp runs etcd, backs up a history of three rounds (full snapshot + three deltas) into the
// location's store and returns the running member.
func backedUp(t *testing.T, loc backuptest.Location) *etcdserver.Member {
	t.Helper()
	m := etcdserver.Start(t).Members[0]
	cli := m.Client(t)
	s := backuptest.Backup(t, cli, loc.Open(t), nil, snapshot.CompressionGzip)
	for round := range 3 {
		backuptest.Churn(t, cli, round)
		backuptest.TakeDelta(t, s)
	}
	s.Stop()
	return m
}

// restoreAndCompare restores the location's store through the CLI and compares the restored member with
// the source.
func restoreAndCompare(t *testing.T, loc backuptest.Location, want backuptest.State) {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), "m0.etcd")
	peer := etcdserver.FreeURL(t)
	out := run(t, append(loc.Args(""), "restore", "--data-dir="+dataDir, "--name=m0", "--initial-cluster=m0="+peer.String(),
		"--initial-advertise-peer-urls="+peer.String(), "--initial-cluster-token=cli")...)
	var res struct{ Revision int64 }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Revision != want.Revision {
		t.Fatalf("restore printed %q (%v), want revision %d", out, err, want.Revision)
	}
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer})
	if diff := backuptest.Diff(want, backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
		t.Fatalf("restored member differs from the source:\n%v", diff)
	}
}

// TestRestoreCLI restores a full snapshot plus deltas through `etcdbrctl restore` on Local, S3 and Swift
// (skipped when Swift is not installed).
func TestRestoreCLI(t *testing.T) {
	for _, tc := range []struct {
		name string
		loc  func(*testing.T) backuptest.Location
	}{{"Local", backuptest.LocalLocation}, {"S3", backuptest.S3Location}, {"Swift", backuptest.SwiftLocation}} {
		t.Run(tc.name, func(t *testing.T) {
			loc := tc.loc(t)
			if loc.Home != "" {
				t.Setenv("HOME", loc.Home)
			}
			m := backedUp(t, loc)
			restoreAndCompare(t, loc, backuptest.StateAt(t, m.Client(t), 0))
		})
	}
}

// TestSnapshotCLI takes a compressed final full snapshot of a running etcd through `etcdbrctl snapshot`.
func TestSnapshotCLI(t *testing.T) {
	loc := backuptest.LocalLocation(t)
	t.Setenv("HOME", loc.Home)
	m := etcdserver.Start(t).Members[0]
	rev := backuptest.Churn(t, m.Client(t), 0)
	out := run(t, append(loc.Args(""), "snapshot", "--endpoints="+m.Endpoint(), "--insecure-transport=true", "--final",
		"--compress-snapshots=true", "--compression-policy=gzip")...)
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot printed %q: %v", out, err)
	}
	if snap.Kind != snapshot.KindFull || snap.LastRevision != rev || !snap.IsFinal || snap.CompressionSuffix != ".gz" {
		t.Fatalf("snapshot %+v, want a final gzip full snapshot at revision %d", snap, rev)
	}
	list, err := loc.Open(t).List(t.Context())
	if err != nil || len(list) != 1 || list[0].SnapName != snap.SnapName {
		t.Fatalf("store holds %v (%v), want %s", list, err, snap.SnapName)
	}
	restoreAndCompare(t, loc, backuptest.StateAt(t, m.Client(t), 0))
}

// TestSnapshotCLIOnS3CompatibleProviders takes a full snapshot through `etcdbrctl snapshot` into OSS
// (--storage-provider=alicloud), ECS (dell) and OCS (openshift) stores, each with its own secret format,
// and finds it in the store. etcdbrctl used to exit with `storage provider "OSS" is not supported`.
func TestSnapshotCLIOnS3CompatibleProviders(t *testing.T) {
	m := etcdserver.Start(t).Members[0]
	rev := backuptest.Churn(t, m.Client(t), 0)
	for name, location := range map[string]func(*testing.T) backuptest.Location{
		"OSS": backuptest.OSSLocation, "ECS": backuptest.ECSLocation, "OCS": backuptest.OCSLocation,
	} {
		t.Run(name, func(t *testing.T) {
			loc := location(t)
			out := run(t, append(loc.Args(""), "snapshot", "--endpoints="+m.Endpoint(), "--insecure-transport=true")...)
			var snap snapshot.Snapshot
			if err := json.Unmarshal([]byte(out), &snap); err != nil || snap.LastRevision != rev {
				t.Fatalf("snapshot printed %q (%v), want a full snapshot at revision %d", out, err, rev)
			}
			list, err := loc.Open(t).List(t.Context())
			if err != nil || len(list) != 1 || list[0].SnapName != snap.SnapName {
				t.Fatalf("store holds %v (%v), want %s", list, err, snap.SnapName)
			}
		})
	}
}

// TestCompactThenCopyCLI compacts a Local store through `etcdbrctl compact`, copies it to S3 through
// `etcdbrctl copy` with the target's credentials in AWS_APPLICATION_CREDENTIALS as druid passes them,
// and restores from S3.
func TestCompactThenCopyCLI(t *testing.T) {
	src, dst := backuptest.LocalLocation(t), backuptest.S3Location(t)
	t.Setenv("HOME", src.Home)
	m := backedUp(t, src)
	want := backuptest.StateAt(t, m.Client(t), 0)

	out := run(t, append(src.Args(""), "compact", "--data-dir="+filepath.Join(t.TempDir(), "compaction.etcd"), "--compress-snapshots=true")...)
	var compacted struct {
		Snapshot        snapshot.Snapshot
		CompactedDeltas int
	}
	if err := json.Unmarshal([]byte(out), &compacted); err != nil || compacted.CompactedDeltas != 3 || compacted.Snapshot.LastRevision != want.Revision {
		t.Fatalf("compact printed %q (%v), want 3 deltas compacted into revision %d", out, err, want.Revision)
	}

	t.Setenv("AWS_APPLICATION_CREDENTIALS", dst.Config.SecretDir)
	targetArgs := []string{"--storage-provider=S3", "--store-container=" + dst.Config.Container, "--store-prefix=" + dst.Config.Prefix}
	out = run(t, append(append(targetArgs, src.Args("source-")...), "copy", "--max-backups-to-copy=1")...)
	var copied struct{ Copied []*snapshot.Snapshot }
	if err := json.Unmarshal([]byte(out), &copied); err != nil || len(copied.Copied) != 1 || copied.Copied[0].SnapName != compacted.Snapshot.SnapName {
		t.Fatalf("copy printed %q (%v), want only %s copied", out, err, compacted.Snapshot.SnapName)
	}
	restoreAndCompare(t, dst, want)
}

// TestCompactKeepsTheSnapshotsCompression runs `etcdbrctl compact` without compression flags, as the
// upstream etcd-druid's compaction Job runs it, on a store of gzip'd snapshots: the compacted snapshot is
// gzip'd too (named ".gz"), as upstream etcd-backup-restore's compactor writes it, and restores.
func TestCompactKeepsTheSnapshotsCompression(t *testing.T) {
	loc := backuptest.LocalLocation(t)
	t.Setenv("HOME", loc.Home)
	m := backedUp(t, loc)
	want := backuptest.StateAt(t, m.Client(t), 0)

	out := run(t, append(loc.Args(""), "compact", "--data-dir="+filepath.Join(t.TempDir(), "compaction.etcd"))...)
	var compacted struct{ Snapshot snapshot.Snapshot }
	if err := json.Unmarshal([]byte(out), &compacted); err != nil {
		t.Fatalf("compact printed %q: %v", out, err)
	}
	if compacted.Snapshot.CompressionSuffix != ".gz" || compacted.Snapshot.LastRevision != want.Revision {
		t.Fatalf("compacted snapshot %s, want a gzip'd full snapshot at revision %d", compacted.Snapshot.SnapName, want.Revision)
	}
	restoreAndCompare(t, loc, want)
}
