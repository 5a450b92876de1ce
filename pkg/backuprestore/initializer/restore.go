package initializer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
)

// tempEtcdReadyTimeout bounds the start of the temporary etcd used for the post-restore snapshot; a
// one-member cluster elects itself at once.
const tempEtcdReadyTimeout = time.Minute

// restoreAsFirstMember (case 7, and single-member clusters with invalid or stale data): the data
// directory is moved aside and rebuilt from the latest full snapshot and every delta after it, as a
// one-member cluster of this member; a new full snapshot is taken from it before etcd starts for real.
// Without backups (possible only for a single-member cluster) the member starts empty.
func (i *Initializer) restoreAsFirstMember(ctx context.Context, f Facts) (State, error) {
	if err := i.moveDataAside(f.Data); err != nil {
		return State{}, err
	}
	if !dataDirEmpty(i.opts.DataDir) {
		return State{}, fmt.Errorf("data dir %s is not empty after moving it aside", i.opts.DataDir)
	}
	st := State{Case: CaseNonQuorateFirstRestore, ClusterState: memberconfig.ClusterStateNew}
	if !f.Backup.Exists {
		i.log.Info("No backups: starting with an empty data directory")
		return st, writeMarker(i.opts.DataDir, i.opts.Owner)
	}
	self := i.opts.Member
	one := memberconfig.InitialCluster{{Name: self.Name, PeerURLs: self.PeerURLs}}
	start := time.Now()
	opts := restorer.Options{
		Store: i.opts.Store, DataDir: i.opts.DataDir, Name: self.Name, InitialCluster: one.String(),
		InitialAdvertisePeerURLs: self.PeerURLs, ClusterToken: i.opts.ClusterToken, Log: i.log,
	}
	from := "the store"
	if src := i.opts.RestoreSource; f.Backup.FromSource && src != nil {
		opts.Store, opts.TargetRevision, opts.TargetTime = src.Store, src.TargetRevision, src.TargetTime
		from = "the restore source"
		i.log.Info("New cluster: restoring from the restore source", "targetRevision", src.TargetRevision, "targetTime", src.TargetTime)
	}
	res, err := restorer.Restore(ctx, opts)
	i.opts.Metrics.restored(RestoreSingleNode, start, err)
	if err != nil {
		return State{}, fmt.Errorf("restoring from %s: %w", from, err)
	}
	i.log.Info("Restored the data directory", "from", from, "revision", res.Revision, "deltas", len(res.Deltas), "took", res.Duration)
	if i.opts.TakeFullSnapshot != nil {
		if err := i.snapshotRestoredData(ctx, one); err != nil {
			return State{}, err
		}
	}
	return st, writeMarker(i.opts.DataDir, i.opts.Owner)
}

// snapshotRestoredData starts a temporary etcd on the restored data directory, listening on loopback
// only (no client can write to it), and takes a full snapshot through TakeFullSnapshot. Why before the
// real start: the new cluster's backups then begin with a snapshot of its own, and the next restore
// needs one object instead of the old full snapshot plus all of its deltas. A failed snapshot fails
// the initialization: the wrapper retries, restoring again from the unchanged store.
func (i *Initializer) snapshotRestoredData(ctx context.Context, one memberconfig.InitialCluster) error {
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = i.opts.Member.Name, i.opts.DataDir
	loop := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{loop}, []url.URL{loop}
	cfg.ListenPeerUrls = []url.URL{loop}
	var adv []url.URL
	for _, p := range i.opts.Member.PeerURLs {
		u, err := url.Parse(p)
		if err != nil {
			return fmt.Errorf("peer URL %q: %w", p, err)
		}
		adv = append(adv, *u)
	}
	cfg.AdvertisePeerUrls = adv
	cfg.InitialCluster, cfg.InitialClusterToken = one.String(), i.opts.ClusterToken
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("starting a temporary etcd on the restored data: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("temporary etcd on the restored data: %w", err)
	case <-time.After(tempEtcdReadyTimeout):
		return errors.New("temporary etcd on the restored data did not become ready")
	case <-ctx.Done():
		return ctx.Err()
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{"http://" + e.Clients[0].Addr().String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := i.opts.TakeFullSnapshot(ctx, cli); err != nil {
		return fmt.Errorf("full snapshot after the restore: %w", err)
	}
	i.log.Info("Took a full snapshot of the restored data")
	return nil
}
