package snapshot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseRelativeKey parses a key below the store prefix, "v2/<name>" or "v1/Backup-<unix>/<name>".
// Anything else is an error, so that stray objects are never taken for backups.
func ParseRelativeKey(rel string) (*Snapshot, error) {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) == 2 && parts[0] == string(LayoutV2):
		return ParseName(parts[1])
	case len(parts) == 3 && parts[0] == string(LayoutV1):
		if err := checkV1Dir(parts[1]); err != nil {
			return nil, fmt.Errorf("parsing snapshot key %q: %w", rel, err)
		}
		s, err := ParseName(parts[2])
		if err != nil {
			return nil, err
		}
		s.SnapDir = parts[1]
		return s, nil
	default:
		return nil, fmt.Errorf("parsing snapshot key %q: want \"v2/<name>\" or \"v1/%s<unix>/<name>\"", rel, v1DirPrefix)
	}
}

// ParseName parses a snapshot base name "<Kind>-<start %08d>-<last %08d>-<unix>[suffix][.final]".
func ParseName(name string) (*Snapshot, error) {
	s, err := parseName(name)
	if err != nil {
		return nil, fmt.Errorf("parsing snapshot name %q: %w", name, err)
	}
	return s, nil
}

func parseName(name string) (*Snapshot, error) {
	tokens := strings.Split(name, "-")
	if len(tokens) != 4 {
		return nil, fmt.Errorf("want 4 '-'-separated fields, got %d", len(tokens))
	}
	kind, err := parseKind(tokens[0])
	if err != nil {
		return nil, err
	}
	start, err := parseDigits("start revision", tokens[1])
	if err != nil {
		return nil, err
	}
	last, err := parseDigits("last revision", tokens[2])
	if err != nil {
		return nil, err
	}
	created, suffix, final, err := parseTail(tokens[3])
	if err != nil {
		return nil, err
	}
	switch {
	case kind == KindFull && start != 0:
		return nil, fmt.Errorf("full snapshot with start revision %d, want 0", start)
	case kind == KindIncr && start > last:
		return nil, fmt.Errorf("start revision %d is after last revision %d", start, last)
	case kind == KindIncr && final:
		return nil, fmt.Errorf("only full snapshots can be %s", FinalSuffix)
	}
	return &Snapshot{
		Kind:              kind,
		StartRevision:     start,
		LastRevision:      last,
		CreatedOn:         created,
		SnapName:          name,
		CompressionSuffix: suffix,
		IsFinal:           final,
	}, nil
}

// parseTail splits "<unix>[.gz|.Z|.zlib][.final]".
func parseTail(tail string) (time.Time, string, bool, error) {
	final := strings.HasSuffix(tail, FinalSuffix)
	tail = strings.TrimSuffix(tail, FinalSuffix)
	digits, suffix := tail, ""
	if i := strings.IndexByte(tail, '.'); i >= 0 {
		digits, suffix = tail[:i], tail[i:]
		if _, ok := compressionForSuffix(suffix); !ok {
			return time.Time{}, "", false, fmt.Errorf("unknown suffix %q", suffix)
		}
	}
	unix, err := parseDigits("creation time", digits)
	if err != nil {
		return time.Time{}, "", false, err
	}
	return time.Unix(unix, 0).UTC(), suffix, final, nil
}

// checkV1Dir validates the legacy per-backup directory name "Backup-<unix>".
func checkV1Dir(dir string) error {
	digits, ok := strings.CutPrefix(dir, v1DirPrefix)
	if !ok {
		return fmt.Errorf("v1 directory %q does not start with %q", dir, v1DirPrefix)
	}
	_, err := parseDigits("v1 directory time", digits)
	return err
}

// parseDigits accepts only plain decimal digits: no sign, no spaces, so names round-trip exactly.
func parseDigits(what, s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty %s", what)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%s %q is not a decimal number", what, s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	return v, nil
}
