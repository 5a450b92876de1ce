package compaction

import (
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// leaseRevision reads the snapshot revision the sidecar writes as a snapshot lease's holderIdentity (a
// decimal string). ok is false while no snapshot was taken (empty) or for anything unparsable.
func leaseRevision(lease *coordinationv1.Lease) (int64, bool) {
	if lease == nil || lease.Spec.HolderIdentity == nil {
		return 0, false
	}
	rev, err := strconv.ParseInt(*lease.Spec.HolderIdentity, 10, 64)
	if err != nil || rev < 0 {
		return 0, false
	}
	return rev, true
}

// deltaEvents is the number of etcd events recorded only in delta snapshots since the last full snapshot:
// what a restore would have to replay. A full snapshot newer than the last delta means none.
func deltaEvents(fullRevision, deltaRevision int64) int64 {
	return max(deltaRevision-fullRevision, 0)
}
