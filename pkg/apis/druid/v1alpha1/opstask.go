package v1alpha1

import "time"

// Defaults of an on-demand snapshot task, as the upstream CRD sets them.
const (
	DefaultOpsTaskTTLSecondsAfterFinished int32 = 3600
	DefaultOnDemandSnapshotTimeoutDelta   int32 = 60
	DefaultOnDemandSnapshotTimeoutFull    int32 = 900
	// MinOnDemandSnapshotTimeoutDelta and MinOnDemandSnapshotTimeoutFull are the schema's minimums.
	MinOnDemandSnapshotTimeoutDelta int32 = 10
	MinOnDemandSnapshotTimeoutFull  int32 = 120
)

// MaxOpsTaskLastErrors is how many errors status.lastErrors keeps.
const MaxOpsTaskLastErrors = 10

// OpsTaskTTLAfterFinished is spec.ttlSecondsAfterFinished, or its default when unset.
func OpsTaskTTLAfterFinished(t *EtcdOpsTask) time.Duration {
	ttl := DefaultOpsTaskTTLSecondsAfterFinished
	if t.Spec.TTLSecondsAfterFinished != nil {
		ttl = *t.Spec.TTLSecondsAfterFinished
	}
	return time.Duration(ttl) * time.Second
}

// OpsTaskExpiresAt is when a finished task is to be deleted: its last transition plus its TTL. It is the zero
// time for a task that has not finished.
func OpsTaskExpiresAt(t *EtcdOpsTask) time.Time {
	if !t.IsCompleted() || t.Status.LastTransitionTime == nil {
		return time.Time{}
	}
	return t.Status.LastTransitionTime.Add(OpsTaskTTLAfterFinished(t))
}

// OnDemandSnapshotTimeout is how long the snapshot may take: timeoutSecondsFull or timeoutSecondsDelta by type, or their
// defaults when unset.
func OnDemandSnapshotTimeout(c *OnDemandSnapshotConfig) time.Duration {
	seconds, set := DefaultOnDemandSnapshotTimeoutFull, c.TimeoutSecondsFull
	if c.Type == OnDemandSnapshotTypeDelta {
		seconds, set = DefaultOnDemandSnapshotTimeoutDelta, c.TimeoutSecondsDelta
	}
	if set != nil {
		seconds = *set
	}
	return time.Duration(seconds) * time.Second
}
