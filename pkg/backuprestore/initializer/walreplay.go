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
// Only a one-member membership is replayed: a copy of a member of a larger cluster would dial the other
// members under the real member's identity. The copy needs as much free space on the volume as the
// database and the WAL take.
func replayedRevision(ctx context.Context, dataDir string, self memberconfig.Member, token string) (int64, error) {
	db, err := readDB(dbPath(dataDir))
	if err != nil {
		return 0, err
	}
	if db.members != 1 {
		return 0, fmt.Errorf("the data directory's membership has %d members: its WAL cannot be replayed alone", db.members)
	}
	scratch, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dataDir)), "."+filepath.Base(dataDir)+".wal-replay-")
	if err != nil {
		return 0, fmt.Errorf("creating the scratch directory for the WAL replay: %w", err)
	}
	defer os.RemoveAll(scratch) // only the copy: the data directory is untouched
	if err := os.CopyFS(memberDir(scratch), os.DirFS(memberDir(dataDir))); err != nil {
		return 0, fmt.Errorf("copying the member directory for the WAL replay: %w", err)
	}
	if err := os.Chmod(scratch, 0o700); err != nil { //nolint:gosec // a directory: owner-only with the search bit, as the member dir etcd expects
		return 0, err
	}

	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = self.Name, scratch
	loop := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls, cfg.ListenPeerUrls = []url.URL{loop}, []url.URL{loop}, []url.URL{loop}
	var adv []url.URL
	for _, p := range self.PeerURLs {
		u, err := url.Parse(p)
		if err != nil {
			return 0, fmt.Errorf("peer URL %q: %w", p, err)
		}
		adv = append(adv, *u)
	}
	cfg.AdvertisePeerUrls = adv
	cfg.InitialCluster = memberconfig.InitialCluster{{Name: self.Name, PeerURLs: self.PeerURLs}}.String()
	cfg.InitialClusterToken = token
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return 0, fmt.Errorf("starting a throwaway etcd on a copy of the data: %w", err)
	}
	defer e.Close()
	// Ready means the member published itself through raft, which is applied after every entry the WAL
	// held; leases cannot have expired yet (a new leader extends them), so no revocation is counted.
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return 0, fmt.Errorf("throwaway etcd on a copy of the data: %w", err)
	case <-time.After(replayReadyTimeout):
		return 0, errors.New("throwaway etcd on a copy of the data did not become ready")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return e.Server.KV().Rev(), nil
}
