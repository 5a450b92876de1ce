package initializer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
)

// replayReadyTimeout bounds the start of the throwaway etcd that replays a WAL.
const replayReadyTimeout = 2 * time.Minute

// replayedRevision returns the revision etcd serves once it has started on dataDir and applied every
// entry of its WAL, for a database that lags its WAL (DataFacts.WALAhead). Counting the WAL's requests is
// not enough: whether a transaction, a delete or a lease revocation creates a revision depends on the
// data. So the member directory is copied next to the data directory and a throwaway embedded etcd,
// listening on loopback ports of its own, starts on the copy, applies the WAL exactly as the real member
// would, and reports its revision; the copy is then removed. The original directory is only read.
//
// Data an older etcd wrote is not replayed (etcddata.ErrDataVersion): the revision stays unknown. Only a one-member membership is replayed: a copy of a member of a larger cluster would dial the other
// members under the real member's identity. The copy needs as much free space on the volume as the
// database and the WAL take.
func replayedRevision(ctx context.Context, dataDir string, self memberconfig.Member, token string) (int64, error) {
	// This etcd would panic in this process on data an older etcd wrote; the wrapper steps such data.
	if err := etcddata.CheckDataVersion(dataDir); err != nil {
		return 0, err
	}
	db, err := etcddata.ReadDB(dbPath(dataDir))
	if err != nil {
		return 0, err
	}
	if db.Members != 1 {
		return 0, fmt.Errorf("the data directory's membership has %d members: its WAL cannot be replayed alone", db.Members)
	}
	var adv []url.URL
	for _, p := range self.PeerURLs {
		u, err := url.Parse(p)
		if err != nil {
			return 0, fmt.Errorf("peer URL %q: %w", p, err)
		}
		adv = append(adv, *u)
	}
	e, scratch, err := startOnCopy(ctx, dataDir, filepath.Dir(filepath.Clean(dataDir)), func(cfg *embed.Config) {
		cfg.Name, cfg.AdvertisePeerUrls = self.Name, adv
		cfg.InitialCluster = memberconfig.InitialCluster{{Name: self.Name, PeerURLs: self.PeerURLs}}.String()
		cfg.InitialClusterToken = token
	})
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch) // only the copy: the data directory is untouched
	defer e.Close()
	return e.Server.KV().Rev(), nil
}

// startOnCopy copies dataDir's member directory into a new directory below scratchParent and starts a
// throwaway embedded etcd on the copy, listening on loopback ports of its own (configure adjusts its
// configuration), and returns once it is ready: every entry of the WAL is then applied. The caller
// closes the etcd and removes the returned scratch directory; on error nothing is left behind. The
// original directory is only read.
func startOnCopy(ctx context.Context, dataDir, scratchParent string, configure func(*embed.Config)) (*embed.Etcd, string, error) {
	scratch, err := os.MkdirTemp(scratchParent, "."+filepath.Base(filepath.Clean(dataDir))+".wal-replay-")
	if err != nil {
		return nil, "", fmt.Errorf("creating the scratch directory for the WAL replay: %w", err)
	}
	e, err := startEtcdOnCopy(ctx, dataDir, scratch, configure)
	if err != nil {
		_ = os.RemoveAll(scratch) // only the copy
		return nil, "", err
	}
	return e, scratch, nil
}

func startEtcdOnCopy(ctx context.Context, dataDir, scratch string, configure func(*embed.Config)) (*embed.Etcd, error) {
	if err := os.CopyFS(memberDir(scratch), os.DirFS(memberDir(dataDir))); err != nil {
		return nil, fmt.Errorf("copying the member directory for the WAL replay: %w", err)
	}
	if err := os.Chmod(scratch, 0o700); err != nil { //nolint:gosec // a directory: owner-only with the search bit, as the member dir etcd expects
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = scratch
	loop := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls, cfg.ListenPeerUrls = []url.URL{loop}, []url.URL{loop}, []url.URL{loop}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	configure(cfg)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting a throwaway etcd on a copy of the data: %w", err)
	}
	// Ready means the member published itself through raft, which is applied after every entry the WAL
	// held; leases cannot have expired yet (a new leader extends them), so no revocation is counted.
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err = <-e.Err():
		err = fmt.Errorf("throwaway etcd on a copy of the data: %w", err)
	case <-time.After(replayReadyTimeout):
		err = errors.New("throwaway etcd on a copy of the data did not become ready")
	case <-ctx.Done():
		err = ctx.Err()
	}
	e.Close()
	return nil, err
}
