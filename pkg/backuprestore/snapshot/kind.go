package snapshot

import "fmt"

// Kind tells whether a snapshot is a complete database (restorable on its own) or the events of a
// revision range that must be applied on top of an earlier snapshot.
type Kind string

const (
	// KindFull is a complete etcd database as streamed by Maintenance.Snapshot.
	KindFull Kind = "Full"
	// KindIncr is a delta snapshot: the watch events of a contiguous revision range.
	KindIncr Kind = "Incr"
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
