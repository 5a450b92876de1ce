package wrapper

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
)

// joinWait bounds how long a joining member waits for the cluster it joins to answer; then etcd starts
// anyway, and fails as it would have without the wait.
const joinWait = 2 * time.Minute

// waitForJoinPeers holds back the start of a member that joins a running cluster with an empty data
// directory (initial-cluster-state existing, no WAL) until another member of its initial cluster answers
// on its peer URL, or joinWait passed, or ctx ended. etcd fetches the cluster from those members when it
// starts such a member and exits after two seconds when none answers; each exit is a container restart,
// which the kubelet delays longer every time. Right after a member's pod was replaced, the seed's DNS may
// answer with the replaced pod's old address for as long as it caches it, often 30 s, when something
// asked for the name shortly before: waiting here lets the member start the moment the cluster answers.
// A member with data does not ask the others when it starts, and is not held.
func waitForJoinPeers(ctx context.Context, cfg *embed.Config, interval time.Duration, log logr.Logger) {
	if cfg.ClusterState != embed.ClusterStateFlagExisting || hasWAL(cfg.Dir) {
		return
	}
	deadline := time.Now().Add(joinWait)
	for logged := false; len(peerVersions(ctx, cfg)) == 0; logged = true {
		if !logged {
			log.Info("Waiting for a member of the cluster to answer before joining it", "upTo", joinWait)
		}
		if time.Now().After(deadline) {
			log.Info("No member of the cluster answered; starting etcd anyway")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// hasWAL tells whether the data directory holds a member's write-ahead log.
func hasWAL(dataDir string) bool {
	entries, err := os.ReadDir(filepath.Join(dataDir, "member", "wal"))
	return err == nil && len(entries) > 0
}
