package snapshot

import (
	"fmt"
	"path"
	"time"
)

// Snapshot describes one backup object. Everything in it except Prefix is encoded in the object's
// name, so listing a store is enough to plan a restore. The JSON field names are those the sidecar's
// HTTP API (/snapshot/latest, /snapshot/full) reports, so clients of either implementation agree.
type Snapshot struct {
	// Kind is Full or Incr.
	Kind Kind `json:"kind"`
	// StartRevision is the first revision a delta covers; 0 for a full snapshot.
	StartRevision int64 `json:"startRevision"`
	// LastRevision is the newest revision contained: the database revision of a full snapshot, the
	// revision of the last event of a delta.
	LastRevision int64 `json:"lastRevision"`
	// CreatedOn is when the snapshot was taken, with second precision as in the name.
	CreatedOn time.Time `json:"createdOn"`
	// SnapDir is the legacy v1 directory ("Backup-<unix>") holding the snapshot; empty in v2.
	SnapDir string `json:"snapDir"`
	// SnapName is the object's base name, e.g. "Full-00000000-00000042-1700000000.gz".
	SnapName string `json:"snapName"`
	// Prefix is the store prefix the snapshot was listed under (informational; stores use their own).
	Prefix string `json:"prefix"`
	// CompressionSuffix is ".gz", ".Z", ".zlib" or empty; it selects the codec of the contents.
	CompressionSuffix string `json:"compressionSuffix"`
	// IsFinal marks the last full snapshot of a cluster that was shut down on purpose.
	IsFinal bool `json:"isFinal"`
}

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
