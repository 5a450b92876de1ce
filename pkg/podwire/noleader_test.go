package podwire

import (
	"testing"
	"time"
)

// The report is written by a sidecar of one version and read by a druid of another: its JSON is fixed,
// and a report druid cannot trust is refused rather than read as a lost quorum.
func TestNoLeaderReportRoundTrip(t *testing.T) {
	since := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	r := NoLeaderReport{Since: since, ObservedAt: since.Add(25 * time.Second), MemberData: false}
	const want = `{"since":"2031-05-06T07:08:09Z","observedAt":"2031-05-06T07:08:34Z","memberData":false}`
	if got := r.Encode(); got != want {
		t.Fatalf("Encode() = %s, want %s", got, want)
	}
	got, err := ParseNoLeaderReport(want)
	if err != nil || !got.Since.Equal(r.Since) || !got.ObservedAt.Equal(r.ObservedAt) || got.MemberData || got.Lasted() != 25*time.Second {
		t.Errorf("ParseNoLeaderReport(%s) = %+v, %v", want, got, err)
	}
	for _, bad := range []string{
		``, `yes`, `{"observedAt":"2031-05-06T07:08:34Z","memberData":false}`, `{"since":"2031-05-06T07:08:09Z","memberData":false}`,
		`{"since":"2031-05-06T07:08:34Z","observedAt":"2031-05-06T07:08:09Z","memberData":false}`,
	} {
		if _, err := ParseNoLeaderReport(bad); err == nil {
			t.Errorf("ParseNoLeaderReport(%q) accepted", bad)
		}
	}
}
