package decide

import (
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// QuorumLossConfirmation is how long every member's no-leader report must have held (by the reporting
// sidecar's own clock) before case 10 acts on the reports rather than on the lease grace periods. It
// bridges the moments in which a healthy cluster shows the same facts: a leader election, a member's data
// directory between two steps of its initialization. Two heartbeats of the default period.
const QuorumLossConfirmation = 20 * time.Second

// confirmedByMembers is case 10's evidence from the members themselves (podwire.NoLeaderReport), which
// spares the wait for the lease grace periods (Unknown + NotReady, six minutes by default) when the quorum
// is provably gone for good. It returns the members that lost their data, or nil.
//
// Every member of the cluster must report, freshly and for at least QuorumLossConfirmation:
//   - lost: its data directory holds no member data, its pod is not Ready, and the other members answer
//     without a leader (it is NotReady/DataLost in the computed status) — such a member cannot rejoin
//     while the cluster has no quorum, and the cluster has none while these are a majority;
//   - survivor: its etcd runs with its data (a fresh lease) and names no leader.
//
// The lost members must be more than the cluster can spare (the survivors alone are below the quorum),
// and at least one survivor must report: a cluster whose every member lost its data is restored by its
// first member's sidecar on its own (the initialization table's case 7), which druid must not race.
// A member that reports nothing — silent, partitioned, its node gone, its sidecar frozen — or reports a
// leader makes this return nil: silence is no proof, and the lease grace periods decide as before.
func confirmedByMembers(in Input, size int32) []druidv1alpha1.EtcdMemberStatus {
	members := in.Computed.Members
	if int32(len(members)) != size {
		return nil
	}
	etcd := in.Observed.Etcd
	freshness := health.NoLeaderReportFreshness(etcd)
	leases := map[string]int{}
	for i, l := range in.Observed.MemberLeases {
		leases[l.Name] = i
	}
	var lost []druidv1alpha1.EtcdMemberStatus
	survivors := 0
	for _, m := range members {
		i, found := leases[m.Name]
		if !found {
			return nil
		}
		report, fresh := health.FreshNoLeaderReport(&in.Observed.MemberLeases[i], freshness, in.Now)
		if !fresh || report.Lasted() < QuorumLossConfirmation {
			return nil
		}
		switch {
		case !report.MemberData && m.Status == druidv1alpha1.EtcdMemberStatusNotReady && m.Reason == health.MemberReasonDataLost:
			lost = append(lost, m)
		case report.MemberData && m.Status == druidv1alpha1.EtcdMemberStatusReady:
			survivors++
		default:
			return nil
		}
	}
	if survivors == 0 || size-int32(len(lost)) >= health.Quorum(size) || len(maybeServing(in, lost)) > 0 {
		return nil
	}
	return lost
}
