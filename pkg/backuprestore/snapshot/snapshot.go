package snapshot

import (
	"fmt"
	"path"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Snapshot describes one backup object. Everything in it except Prefix is encoded in the object's
// name, so listing a store is enough to plan a restore. Its structure, and so its JSON, is the record the
// sidecar's HTTP API reports (podwire.Snapshot: /snapshot/latest, /snapshot/full, /snapshot/delta), so
// clients of either implementation agree; this type adds the store's methods.
type Snapshot podwire.Snapshot

// NewFull describes a full snapshot to be written in the v2 layout. Its name is derived here so that
// the revision a restore relies on is always the one in the name.
func NewFull(lastRevision int64, createdOn time.Time, c Compression, final bool) *Snapshot {
	s := &Snapshot{
		Kind:              KindFull,
		LastRevision:      lastRevision,
		CreatedOn:         createdOn.Truncate(time.Second),
		CompressionSuffix: c.Suffix(),
		IsFinal:           final,
	}
	s.SnapName = s.formatName()
	return s
}

// NewIncr describes a delta snapshot covering startRevision..lastRevision (inclusive) to be written
// in the v2 layout.
func NewIncr(startRevision, lastRevision int64, createdOn time.Time, c Compression) *Snapshot {
	s := &Snapshot{
		Kind:              KindIncr,
		StartRevision:     startRevision,
		LastRevision:      lastRevision,
		CreatedOn:         createdOn.Truncate(time.Second),
		CompressionSuffix: c.Suffix(),
	}
	s.SnapName = s.formatName()
	return s
}

// Layout tells whether the snapshot lives in the current or the legacy (read-only) layout.
func (s *Snapshot) Layout() Layout {
	if s.SnapDir != "" {
		return LayoutV1
	}
	return LayoutV2
}

// Compression is the codec of the contents, derived from the name suffix.
func (s *Snapshot) Compression() Compression {
	if c, ok := compressionForSuffix(s.CompressionSuffix); ok {
		return c
	}
	return CompressionNone
}

// RelativeKey is the object key below the store prefix ("v2/<name>" or "v1/Backup-<unix>/<name>").
func (s *Snapshot) RelativeKey() string {
	if s.Layout() == LayoutV1 {
		return path.Join(string(LayoutV1), s.SnapDir, s.SnapName)
	}
	return path.Join(string(LayoutV2), s.SnapName)
}

// Key is the full object key below the given store prefix.
func (s *Snapshot) Key(prefix string) string {
	return path.Join(prefix, s.RelativeKey())
}

// String identifies the snapshot in logs and errors.
func (s *Snapshot) String() string {
	return s.RelativeKey()
}

// formatName renders the v2 base name from the fields.
func (s *Snapshot) formatName() string {
	final := ""
	if s.IsFinal {
		final = FinalSuffix
	}
	return fmt.Sprintf("%s-%08d-%08d-%d%s%s", s.Kind, s.StartRevision, s.LastRevision, s.CreatedOn.Unix(), s.CompressionSuffix, final)
}
