package sidecar

import (
	"fmt"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/benchproc"
)

// The etcdbrctl binaries: ours (brctlbin.Ours, built from the checkout) and upstream etcd-backup-restore
// v0.40.0's (brctlbin.Upstream, `make tools-upstream`), each run as a process of its own and measured from
// outside (benchproc.Proc), the same way for both.

// upstreamFullSaved is the line upstream's snapshotter logs once a full snapshot is stored.
var upstreamFullSaved = regexp.MustCompile(`Successfully saved full snapshot at: ([^"\s]+)`)

// upstreamWatching is the line upstream's snapshotter logs once it watches etcd for delta snapshots,
// after its initial full snapshot.
var upstreamWatching = regexp.MustCompile(`Applied watch on etcd from revision: `)

// upstreamSnapshotTimeout bounds how long upstream's `etcdbrctl snapshot` may take to log a full snapshot.
const upstreamSnapshotTimeout = 30 * time.Minute

// brctlCommand runs an etcdbrctl with args and the flags and environment that point it at cfg (an S3
// store of startS3): ours reads the secret directory from a flag, upstream's from
// $AWS_APPLICATION_CREDENTIALS (the same files: accessKeyID, secretAccessKey, region, endpoint,
// s3ForcePathStyle). Neither sees this process's AWS_ variables: upstream's S3 client refuses to start
// with AWS_CA_BUNDLE set ("unable to add custom RootCAs HTTPClient").
func brctlCommand(bin string, upstream bool, cfg snapstore.Config, args ...string) benchproc.Command {
	c := benchproc.Command{Binary: bin, DropEnvPrefixes: []string{"AWS_"},
		Args: append(args, "--storage-provider", "S3", "--store-container", cfg.Container, "--store-prefix", cfg.Prefix)}
	if upstream {
		c.Env = []string{"AWS_APPLICATION_CREDENTIALS=" + cfg.SecretDir}
	} else {
		c.Args = append(c.Args, "--store-secret-dir", cfg.SecretDir)
	}
	return c
}

// upstreamSnapshotArgs are the flags of upstream's `etcdbrctl snapshot` as a snapshotter of etcd at
// endpoint that takes its full snapshot at start and no other (the cron schedule is a year away), gzip
// like ours, with garbage collection off (ours collects none either); deltaPeriod 0 turns delta
// snapshots off.
func upstreamSnapshotArgs(endpoint, tmp string, deltaPeriod time.Duration, deltaMemoryLimit int64) []string {
	return []string{"snapshot", "--endpoints", endpoint, "--schedule", "0 0 1 1 *",
		"--compress-snapshots", "--compression-policy", "gzip", "--garbage-collection-period", "0",
		"--delta-snapshot-period", deltaPeriod.String(), "--delta-snapshot-memory-limit", fmt.Sprint(deltaMemoryLimit),
		"--snapstore-temp-directory", tmp}
}

// runBinarySnapshot takes one full snapshot of etcd at endpoint into cfg with an etcdbrctl binary. Ours
// (`etcdbrctl snapshot`) exits once the snapshot is stored; upstream's runs its schedule on, so its
// snapshot is done when it logs it stored, after which it is stopped. Seconds run from exec to done.
func runBinarySnapshot(b *testing.B, bin string, upstream bool, endpoint string, cfg snapstore.Config, others otherProcesses) snapshotResult {
	b.Helper()
	args := []string{"snapshot", "--endpoints", endpoint, "--compression-policy", "gzip"}
	if upstream {
		args = upstreamSnapshotArgs(endpoint, b.TempDir(), 0, 0)
	}
	etcd, s3 := cpuSecondsOf(others.etcd), cpuSecondsOf(others.s3)
	p, err := benchproc.Start(brctlCommand(bin, upstream, cfg, args...))
	if err != nil {
		b.Fatal(err)
	}
	var res snapshotResult
	var u benchproc.Usage
	if upstream {
		line, at, err := p.WaitForLine(upstreamFullSaved, upstreamSnapshotTimeout)
		if err != nil {
			_, _ = p.Stop()
			b.Fatal(err)
		}
		res.Seconds, res.Object = at.Sub(p.Started).Seconds(), upstreamFullSaved.FindStringSubmatch(line)[1]
		if u, err = p.Stop(); err != nil {
			b.Fatal(err)
		}
	} else {
		if u, err = p.Wait(); err != nil {
			b.Fatal(err)
		}
		res.Seconds, res.Object = u.Seconds, cfg.Prefix
	}
	res.PeakRSSMiB, res.CPUSeconds = u.PeakRSSMiB, u.CPUSeconds
	res.EtcdCPUSeconds, res.S3CPUSeconds = cpuSecondsOf(others.etcd)-etcd, cpuSecondsOf(others.s3)-s3
	return res
}

// upstreamSidecar is upstream's `etcdbrctl snapshot` taking delta snapshots of etcd at endpoint into cfg
// every period or whenever memoryLimit bytes of events are held, after its initial full snapshot; it
// returns once upstream watches etcd.
func upstreamSidecar(b *testing.B, bin, endpoint string, cfg snapstore.Config, period time.Duration, memoryLimit int64) *benchproc.Proc {
	b.Helper()
	p, err := benchproc.Start(brctlCommand(bin, true, cfg, upstreamSnapshotArgs(endpoint, b.TempDir(), period, memoryLimit)...))
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := p.WaitForLine(upstreamWatching, upstreamSnapshotTimeout); err != nil {
		_, _ = p.Stop()
		b.Fatal(err)
	}
	return p
}

// storedBytes is the size of the one full snapshot in cfg, as stored (compressed).
func storedBytes(b *testing.B, cfg snapstore.Config) int64 {
	b.Helper()
	ctx := b.Context()
	store, err := snapstore.New(ctx, cfg, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	snaps, err := store.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if len(snaps) != 1 {
		b.Fatalf("%d snapshots under %s, want the one full snapshot", len(snaps), cfg.Prefix)
	}
	rc, err := store.Fetch(ctx, snaps[0])
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
