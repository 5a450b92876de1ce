package health

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// MemberReasonDataLost is the reason of a member that is NotReady because its sidecar reports that its
// data directory holds no member data while no other member has a leader (podwire.NoLeaderReport with
// memberData false): it cannot serve and waits for a quorate cluster to rejoin. Its lease may still be
// younger than the Unknown threshold — the report is newer evidence than the last renewal.
const MemberReasonDataLost = "DataLost"

// noLeaderReportBeats is how many heartbeat periods a no-leader report stays fresh: like a lease, one
// late renewal is not a stale report.
const noLeaderReportBeats = 3

// NoLeaderReportFreshness is how long a member's no-leader report counts after its sidecar observed it:
// noLeaderReportBeats heartbeats of the Etcd (spec.etcd.heartbeatDuration, its default when unset).
func NoLeaderReportFreshness(etcd *druidv1alpha1.Etcd) time.Duration {
	beat := druidv1alpha1.DefaultHeartbeatDuration
	if d := etcd.Spec.Etcd.HeartbeatDuration; d != nil && d.Duration > 0 {
		beat = d.Duration
	}
	return noLeaderReportBeats * beat
}

// FreshNoLeaderReport is the member lease's no-leader report when it is fresh at now: observed less than
// freshness ago, and not before the lease's last renewal (a renewal after it says the member's etcd
// served since). A report that cannot be read does not count.
func FreshNoLeaderReport(lease *coordinationv1.Lease, freshness time.Duration, now time.Time) (podwire.NoLeaderReport, bool) {
	value, found := lease.Annotations[podwire.AnnotationNoLeader]
	if !found {
		return podwire.NoLeaderReport{}, false
	}
	report, err := podwire.ParseNoLeaderReport(value)
	if err != nil || now.Sub(report.ObservedAt) >= freshness {
		return podwire.NoLeaderReport{}, false
	}
	if renewed := lease.Spec.RenewTime; renewed != nil && report.ObservedAt.Before(renewed.Time) {
		return podwire.NoLeaderReport{}, false
	}
	return report, true
}
