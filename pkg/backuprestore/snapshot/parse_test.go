package snapshot

import (
	"strings"
	"testing"
	"time"
)

func TestParseRelativeKey(t *testing.T) {
	created := time.Unix(1700000000, 0).UTC()
	tests := []struct {
		key  string
		want Snapshot
	}{
		{"v2/Full-00000000-00000042-1700000000", Snapshot{Kind: KindFull, LastRevision: 42, CreatedOn: created, SnapName: "Full-00000000-00000042-1700000000"}},
		{"v2/Full-00000000-00000042-1700000000.gz.final", Snapshot{Kind: KindFull, LastRevision: 42, CreatedOn: created, SnapName: "Full-00000000-00000042-1700000000.gz.final", CompressionSuffix: ".gz", IsFinal: true}},
		{"v2/Full-00000000-00000042-1700000000.final", Snapshot{Kind: KindFull, LastRevision: 42, CreatedOn: created, SnapName: "Full-00000000-00000042-1700000000.final", IsFinal: true}},
		{"v2/Incr-00000043-00000100-1700000000.Z", Snapshot{Kind: KindIncr, StartRevision: 43, LastRevision: 100, CreatedOn: created, SnapName: "Incr-00000043-00000100-1700000000.Z", CompressionSuffix: ".Z"}},
		{"v2/Incr-00000043-00000043-1700000000.zlib", Snapshot{Kind: KindIncr, StartRevision: 43, LastRevision: 43, CreatedOn: created, SnapName: "Incr-00000043-00000043-1700000000.zlib", CompressionSuffix: ".zlib"}},
		{"v2/Incr-123456789-123456799-1700000000", Snapshot{Kind: KindIncr, StartRevision: 123456789, LastRevision: 123456799, CreatedOn: created, SnapName: "Incr-123456789-123456799-1700000000"}},
		{"v1/Backup-1600000000/Full-00000000-00000007-1700000000", Snapshot{Kind: KindFull, LastRevision: 7, CreatedOn: created, SnapDir: "Backup-1600000000", SnapName: "Full-00000000-00000007-1700000000"}},
		{"v1/Backup-1600000000/Incr-00000008-00000009-1700000000.gz", Snapshot{Kind: KindIncr, StartRevision: 8, LastRevision: 9, CreatedOn: created, SnapDir: "Backup-1600000000", SnapName: "Incr-00000008-00000009-1700000000.gz", CompressionSuffix: ".gz"}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := ParseRelativeKey(tt.key)
			if err != nil {
				t.Fatalf("ParseRelativeKey: %v", err)
			}
			if *got != tt.want {
				t.Fatalf("got %+v, want %+v", *got, tt.want)
			}
			if got.RelativeKey() != tt.key {
				t.Fatalf("RelativeKey() = %q, want the parsed key %q", got.RelativeKey(), tt.key)
			}
		})
	}
}

func TestParseRelativeKeyRejectsMalformed(t *testing.T) {
	tests := []struct {
		key     string
		errPart string
	}{
		{"Full-00000000-00000042-1700000000", "want \"v2/<name>\""},
		{"v3/Full-00000000-00000042-1700000000", "want \"v2/<name>\""},
		{"v2/sub/Full-00000000-00000042-1700000000", "want \"v2/<name>\""},
		{"v1/Full-00000000-00000042-1700000000", "want \"v2/<name>\""},
		{"v1/Backups-1/Full-00000000-00000042-1700000000", "does not start with"},
		{"v1/Backup-x1/Full-00000000-00000042-1700000000", "not a decimal number"},
		{"v2/Delta-00000000-00000042-1700000000", "unknown snapshot kind"},
		{"v2/full-00000000-00000042-1700000000", "unknown snapshot kind"},
		{"v2/Full-00000000-00000042", "want 4"},
		{"v2/Full-00000000-00000042-1700000000-1", "want 4"},
		{"v2/Full-00000001-00000042-1700000000", "start revision 1"},
		{"v2/Incr-00000050-00000042-1700000000", "is after last revision"},
		{"v2/Incr-00000001-00000042-1700000000.final", "only full snapshots"},
		{"v2/Full-00000000-000000x2-1700000000", "not a decimal number"},
		{"v2/Full-00000000--0000042-1700000000", "want 4"},
		{"v2/Full-00000000-+0000042-1700000000", "not a decimal number"},
		{"v2/Full-00000000-00000042-1700000000.bz2", "unknown suffix"},
		{"v2/Full-00000000-00000042-1700000000.gz.gz", "unknown suffix"},
		{"v2/Full-00000000-00000042-.gz", "empty creation time"},
		{"v2/Full-00000000-00000042-1700000000.final.gz", "unknown suffix"},
		{"v2/Full-00000000-99999999999999999999-1700000000", "out of range"},
		{"v2/", "want 4"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := ParseRelativeKey(tt.key)
			if err == nil {
				t.Fatalf("ParseRelativeKey(%q) = %+v, want an error", tt.key, got)
			}
			if !strings.Contains(err.Error(), tt.errPart) {
				t.Fatalf("error %q does not mention %q", err, tt.errPart)
			}
		})
	}
}

func TestNewNamesRoundTrip(t *testing.T) {
	created := time.Unix(1700000000, 999_000_000)
	tests := []struct {
		snap *Snapshot
		want string
	}{
		{NewFull(42, created, CompressionNone, false), "Full-00000000-00000042-1700000000"},
		{NewFull(42, created, CompressionGzip, true), "Full-00000000-00000042-1700000000.gz.final"},
		{NewIncr(43, 99, created, CompressionLZW), "Incr-00000043-00000099-1700000000.Z"},
		{NewIncr(100000000, 100000001, created, CompressionZlib), "Incr-100000000-100000001-1700000000.zlib"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if tt.snap.SnapName != tt.want {
				t.Fatalf("name = %q, want %q", tt.snap.SnapName, tt.want)
			}
			if got := tt.snap.Key("shoot--a--b/etcd-main"); got != "shoot--a--b/etcd-main/v2/"+tt.want {
				t.Fatalf("Key = %q", got)
			}
			parsed, err := ParseName(tt.snap.SnapName)
			if err != nil {
				t.Fatalf("ParseName: %v", err)
			}
			if !parsed.CreatedOn.Equal(tt.snap.CreatedOn) || parsed.LastRevision != tt.snap.LastRevision ||
				parsed.StartRevision != tt.snap.StartRevision || parsed.Compression() != tt.snap.Compression() ||
				parsed.IsFinal != tt.snap.IsFinal || parsed.Kind != tt.snap.Kind {
				t.Fatalf("parsed %+v differs from written %+v", parsed, tt.snap)
			}
		})
	}
}
