package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/leader"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// errSnapshotterStarting is answered on the backup leader when its snapshotter has not resumed from the store
// (which may first take a full snapshot) within snapshotterStartWait of the request.
var errSnapshotterStarting = errors.New("this sidecar is the backup leader but its snapshotter is still starting; retry")

// leaderSnapshots serves the snapshot endpoints (httpapi.Snapshotter) with the snapshotter of the current
// leadership term. It is only asked on the backup leader: httpapi forwards from followers first.
type leaderSnapshots struct {
	leader *backupLeader
	store  snapstore.SnapStore
}

var _ httpapi.Snapshotter = (*leaderSnapshots)(nil)

// snapshotterStartWait is how long a snapshot request waits for the term's snapshotter to start.
const snapshotterStartWait = 30 * time.Second

// running is the snapshotter of the current term. A request that arrives while it starts (right after the
// sidecar or a new term started) waits for it, up to snapshotterStartWait: gardenlet asks for the final
// snapshot of a migration once, and an error sends its whole flow into a retry.
func (l *leaderSnapshots) running(ctx context.Context) (*snapshotter.Snapshotter, error) {
	wait := time.NewTimer(snapshotterStartWait)
	defer wait.Stop()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		if s := l.leader.snapshotter(); s != nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, errSnapshotterStarting
		case <-wait.C:
			return nil, errSnapshotterStarting
		case <-poll.C:
		}
	}
}

// TakeFull implements httpapi.Snapshotter, bounded by --etcd-snapshot-timeout.
func (l *leaderSnapshots) TakeFull(ctx context.Context, final bool) (*snapshot.Snapshot, error) {
	s, err := l.running(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.leader.opts.SnapshotTimeout)
	defer cancel()
	return s.TakeFull(ctx, final)
}

// TakeDelta implements httpapi.Snapshotter, bounded by --etcd-snapshot-timeout.
func (l *leaderSnapshots) TakeDelta(ctx context.Context) (*snapshot.Snapshot, error) {
	s, err := l.running(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.leader.opts.SnapshotTimeout)
	defer cancel()
	return s.TakeDelta(ctx)
}

// Latest implements httpapi.Snapshotter from the store's listing: the snap stream a restore would use.
func (l *leaderSnapshots) Latest(ctx context.Context) (*httpapi.LatestSnapshots, error) {
	snaps, err := l.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the store: %w", err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		return nil, err
	}
	deltas := stream.Deltas
	if deltas == nil {
		deltas = []*snapshot.Snapshot{}
	}
	return &httpapi.LatestSnapshots{FullSnapshot: stream.Full, DeltaSnapshots: deltas}, nil
}

// electedLeader is the httpapi.LeaderResolver of the sidecar: the backup leader as the elector last
// observed it, so that requests and the snapshotter agree on who leads.
type electedLeader struct {
	elector    *leader.Elector
	sidecarURL func(clientURL string) (string, error)
}

// BackupLeader implements httpapi.LeaderResolver.
func (e electedLeader) BackupLeader(context.Context) (httpapi.Leader, error) {
	if e.elector.IsLeader() {
		return httpapi.Leader{Self: true}, nil
	}
	u := e.elector.LeaderClientURL()
	if u == "" {
		return httpapi.Leader{}, errors.New("no backup leader known yet (no raft leader, or the local member does not answer)")
	}
	s, err := e.sidecarURL(u)
	return httpapi.Leader{URL: s}, err
}

// sameHostSidecar locates the sidecar of a member on the host of its client URL, with this sidecar's
// scheme and port: in a pod both containers share the pod's network identity, and druid configures every
// sidecar of an Etcd alike.
func sameHostSidecar(scheme string, port int) func(string) (string, error) {
	return func(clientURL string) (string, error) {
		u, err := url.Parse(clientURL)
		if err != nil {
			return "", fmt.Errorf("client URL of the backup leader: %w", err)
		}
		return scheme + "://" + net.JoinHostPort(u.Hostname(), strconv.Itoa(port)), nil
	}
}
