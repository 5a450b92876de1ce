package podwire

import (
	"encoding/json"
	"fmt"
	"time"
)

// AnnotationNoLeader on a member lease is the member's sidecar reporting that its member sees no etcd
// leader (a NoLeaderReport as JSON); absent while the member has a leader or cannot tell. The sidecar
// writes it at every heartbeat while the state lasts — also when its etcd does not run, in which case only
// the annotation changes, never renewTime or holderIdentity: a member without a running etcd must not look
// alive. Druid reads it to tell a quorum that is gone for good (a majority of members lost its data) from
// members that are merely silent, which only the lease thresholds may judge.
const AnnotationNoLeader = "member.etcd.gardener.cloud/no-leader"

// NoLeaderReport is what a member's sidecar observed about leadership and its own data.
type NoLeaderReport struct {
	// Since is when the sidecar first observed "no leader" without interruption (its own clock).
	Since time.Time `json:"since"`
	// ObservedAt is the sidecar's latest observation (its own clock): a report that stops being renewed
	// goes stale like a lease does.
	ObservedAt time.Time `json:"observedAt"`
	// MemberData tells whether the member's data directory holds member data. false with no leader is a
	// member that lost its data (wiped or replaced volume) and waits for a quorate cluster to rejoin,
	// which never comes back while a majority is in that state.
	MemberData bool `json:"memberData"`
}

// Encode is the annotation's value.
func (r NoLeaderReport) Encode() string {
	b, _ := json.Marshal(r) // a struct of times and a bool always marshals
	return string(b)
}

// ParseNoLeaderReport reads the annotation's value; a report without both times, or observed before it
// began, is an error.
func ParseNoLeaderReport(value string) (NoLeaderReport, error) {
	var r NoLeaderReport
	if err := json.Unmarshal([]byte(value), &r); err != nil || r.Since.IsZero() || r.ObservedAt.IsZero() || r.ObservedAt.Before(r.Since) {
		return NoLeaderReport{}, fmt.Errorf("unexpected no-leader report %q", value)
	}
	return r, nil
}

// Lasted is how long the member has seen no leader, by its own clock only (Since and ObservedAt come from
// the same clock, so a skew against the reader's clock does not lengthen it).
func (r NoLeaderReport) Lasted() time.Duration { return r.ObservedAt.Sub(r.Since) }
