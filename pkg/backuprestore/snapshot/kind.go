package snapshot

import (
	"fmt"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Kind tells whether a snapshot is a complete database or the events of a revision range; it is the
// kind of the sidecar's snapshot record (podwire.SnapshotKind).
type Kind = podwire.SnapshotKind

const (
	// KindFull is a complete etcd database as streamed by Maintenance.Snapshot.
	KindFull = podwire.SnapshotFull
	// KindIncr is a delta snapshot: the watch events of a contiguous revision range.
	KindIncr = podwire.SnapshotIncr
)

// parseKind maps the name token to a Kind, rejecting anything else so that stray objects are not
// mistaken for backups.
func parseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindFull, KindIncr:
		return Kind(s), nil
	default:
		return "", fmt.Errorf("unknown snapshot kind %q (want %q or %q)", s, KindFull, KindIncr)
	}
}
