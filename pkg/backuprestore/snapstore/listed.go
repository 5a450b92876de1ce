package snapstore

import (
	"strings"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// listedSnapshot is the snapshot a key listed below a store's (clean) prefix names. A key that names no
// snapshot is no error: a store's prefix may hold other objects (staging, segments, an operator's
// notes); it is logged at V(1) and skipped (ok false).
func listedSnapshot(log logr.Logger, prefix, key string) (snap *snapshot.Snapshot, ok bool) {
	relative := key
	if prefix != "" {
		relative = strings.TrimPrefix(key, prefix+"/")
	}
	snap, err := snapshot.ParseRelativeKey(relative)
	if err != nil {
		log.V(1).Info("Ignoring object that is not a snapshot", "key", key, "reason", err.Error())
		return nil, false
	}
	snap.Prefix = prefix
	return snap, true
}
