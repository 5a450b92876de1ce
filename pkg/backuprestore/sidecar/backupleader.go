package sidecar

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/scaledown"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// startRetryDelay paces new attempts to start the snapshotter (store or etcd unavailable).
const startRetryDelay = 5 * time.Second

// backupLeader is the work only the backup leader does (upstream etcd-druid's DEP-01, "Work-flows only on the leading
// member"), run for one leadership term at a time by the leader.Elector: the snapshotter (when a store
// is configured), the removal of members beyond the cluster size and defragmentation (defrag.Keep). The
// snapshotter of the current term is published for the HTTP API (see snapshots.go).
type backupLeader struct {
	opts *Options
	cli  *clientv3.Client
	// watchCli is the snapshotter's delta watch connection (nil without backups).
	watchCli  *clientv3.Client
	endpoint  string
	clientTLS *tls.Config
	// templatePath gives the cluster size, read anew by every member cleanup run.
	templatePath string
	// memberLeases marks the leases of members that left the cluster (nil without member leases).
	memberLeases scaledown.MemberLeases
	// store is nil without backups.
	store   snapstore.SnapStore
	leases  snapshotter.LeaseUpdater
	metrics *snapshotter.Metrics
	// defragMetrics count defragmentations and NOSPACE recoveries; noSpaceReport says why a recovery
	// cannot disarm NOSPACE, for the member lease.
	defragMetrics *defrag.Metrics
	noSpaceReport *defrag.Report
	// memberMetrics time the removals of members beyond the cluster size.
	memberMetrics *member.Metrics
	log           logr.Logger

	// stopping is closed when the sidecar shuts down. A term that ends with it flushes nothing: the pod is
	// being deleted or the cluster stopped, and the revisions stay in the members' volumes for whoever
	// leads next.
	stopping <-chan struct{}

	mu     sync.Mutex
	active *snapshotter.Snapshotter // nil while not leading or while the snapshotter starts
}

// lead runs one term; it returns after ctx (the term) ended and everything it started stopped.
func (b *backupLeader) lead(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { b.cleanupMembers(ctx) })
	if keep := b.opts.keepOptions(); keep.Schedule != "" || keep.CheckPeriod > 0 {
		keep.Defrag = defrag.Options{
			Client: b.cli, ClientTLS: b.clientTLS, LocalEndpoint: b.opts.localEndpoint(), Timeout: b.opts.DefragTimeout,
			AfterDefrag: b.fullSnapshotAfterDefrag, Metrics: b.defragMetrics, Log: b.log,
		}
		keep.CompactRevision = b.compactableRevision
		keep.SnapshotStreamSince = b.snapshotStreamSince
		keep.Report = b.noSpaceReport
		if t, err := memberconfig.LoadTemplate(b.templatePath); err == nil {
			keep.Defrag.FallbackQuota = t.QuotaBackendBytes()
		}
		wg.Go(func() { _ = defrag.Keep(ctx, keep) })
	}
	if b.store != nil {
		wg.Go(func() { b.runSnapshotter(ctx) })
	}
	wg.Wait()
}

// runSnapshotter starts a snapshotter for the term (retrying until it could resume from the store) and
// stops it when the term ends.
func (b *backupLeader) runSnapshotter(ctx context.Context) {
	var s *snapshotter.Snapshotter
	for {
		var err error
		s, err = snapshotter.New(snapshotter.Options{
			Config: b.opts.snapshotterConfig(), Client: b.cli, WatchClient: b.watchCli, Store: b.store, Leases: b.leases, Metrics: b.metrics, Log: b.log,
		})
		if err == nil {
			err = s.Start(ctx)
		}
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		b.log.Error(err, "Starting the snapshotter failed, retrying", "in", startRetryDelay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(startRetryDelay):
		}
	}
	b.setActive(s)
	<-ctx.Done()
	b.setActive(nil)
	s.Stop()
	b.flushIfLeaderless(s)
}

// flushTimeout bounds storing what a leaderless term's snapshotter still buffered; leaderCheckTimeout
// bounds asking the local member whether the cluster has a leader (a stopped member must not hold up
// the end of the term, e.g. on shutdown).
const (
	flushTimeout       = 30 * time.Second
	leaderCheckTimeout = 5 * time.Second
)

// flushIfLeaderless stores the revisions the ended term's snapshotter buffered, and those the local member
// holds beyond them (Snapshotter.Flush), when the term ended because the cluster has no leader, i.e. lost
// its quorum: druid may bootstrap such a cluster again from the backup (the heal decision table's case
// 10), and the writes acknowledged since the last delta snapshot exist in the backup only if this sidecar
// stores them now. While another member leads (or the local member does not answer,
// so one may), its sidecar continues the deltas from the store and finds these revisions in etcd.
func (b *backupLeader) flushIfLeaderless(s *snapshotter.Snapshotter) {
	select {
	case <-b.stopping:
		return
	default:
	}
	check, cancelCheck := context.WithTimeout(context.Background(), leaderCheckTimeout)
	status, err := b.cli.Status(check, b.endpoint)
	cancelCheck()
	if err != nil || status.Leader != 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	snap, err := s.Flush(ctx)
	switch {
	case err != nil:
		b.log.Error(err, "Storing the revisions buffered when the cluster lost its leader failed")
	case snap != nil:
		b.log.Info("Stored the revisions buffered when the cluster lost its leader", "snapshot", snap.SnapName, "revision", snap.LastRevision)
	}
}

func (b *backupLeader) setActive(s *snapshotter.Snapshotter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = s
}

// snapshotter is the running snapshotter of the current term, nil if there is none.
func (b *backupLeader) snapshotter() *snapshotter.Snapshotter {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.active
}

// fullSnapshotAfterDefrag takes a full snapshot once every member was defragmented (the NOSPACE recovery:
// once the alarm is disarmed): the database is at its smallest, and the next restore starts from it.
func (b *backupLeader) fullSnapshotAfterDefrag(ctx context.Context) error {
	s := b.snapshotter()
	if s == nil {
		return nil // no store, or the term is ending
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.SnapshotTimeout)
	defer cancel()
	_, err := s.TakeFull(ctx, false)
	return err
}

// snapshotStreamSince tells when the full snapshot the term's snapshotter streams from etcd now began.
func (b *backupLeader) snapshotStreamSince() (time.Time, bool) {
	if s := b.snapshotter(); s != nil {
		return s.FullStreamOpenSince()
	}
	return time.Time{}, false
}

// compactableRevision bounds the NOSPACE recovery's compaction to the revision the delta watch has
// delivered: every event up to it is in a delta in the store or buffered for the next one, so the
// history etcd drops is history the backup already has. With a store but no running snapshotter (the
// term just started, or the store is unavailable) nothing may go: the revisions after the store's last
// delta are in neither the store nor a buffer, and if the cluster were lost before the new snapshotter's
// first snapshot, compacting them would leave them nowhere. The recovery then waits for the next check.
// Without a store nothing keeps history, and the current revision goes.
func (b *backupLeader) compactableRevision(current int64) (int64, bool) {
	if b.store == nil {
		return current, true
	}
	if s := b.snapshotter(); s != nil {
		return min(current, s.WatchedRevision()), true
	}
	return 0, false
}

// cleanupMembers removes members beyond the template's cluster size (a scale-in) for the term. The size is
// read from the mounted template for every run: the kubelet refreshes it some time after druid changed the
// ConfigMap, and a scale-in must not wait for a restart (druid holds the StatefulSet until it is done).
func (b *backupLeader) cleanupMembers(ctx context.Context) {
	local, err := waitForLocalMember(ctx, b.cli, nil, b.endpoint, time.Second, b.log)
	if err != nil {
		return // term ended
	}
	scaledown.Run(ctx, scaledown.Options{Client: b.cli, ClusterSize: b.clusterSize, Leases: b.memberLeases,
		LocalMemberID: local.Member.ID, Metrics: b.memberMetrics, Log: b.log}, scaledown.DefaultPeriod)
}

// clusterSize is the number of members in the mounted template's initial-cluster.
func (b *backupLeader) clusterSize() (int, error) {
	t, err := memberconfig.LoadTemplate(b.templatePath)
	if err != nil {
		return 0, err
	}
	ic, err := t.InitialCluster()
	if err != nil {
		return 0, err
	}
	if len(ic) == 0 {
		return 0, errors.New("the template's initial-cluster is empty")
	}
	return len(ic), nil
}
