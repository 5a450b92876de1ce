package v1alpha1

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EtcdStatus is the observed state of an etcd cluster, written by druid from the StatefulSet and the member
// and snapshot leases.
type EtcdStatus struct {
	// ObservedGeneration is the generation of the last spec that was reconciled successfully.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	// Etcd references the StatefulSet.
	// +optional
	Etcd *autoscalingv1.CrossVersionObjectReference `json:"etcd,omitempty"`
	// Conditions of the cluster (Ready, AllMembersReady, AllMembersUpdated, BackupReady, DataVolumesReady, …).
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// LastErrors of the last reconcile; empty after a success.
	// +optional
	LastErrors []LastError `json:"lastErrors,omitempty"`
	// LastOperation is the last operation druid ran on this Etcd.
	// +optional
	LastOperation *LastOperation `json:"lastOperation,omitempty"`
	// CurrentReplicas is the StatefulSet's current replica count.
	// +optional
	CurrentReplicas int32 `json:"currentReplicas,omitempty"`
	// Replicas is the StatefulSet's replica count (the scale subresource's status).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the StatefulSet's ready replica count.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Ready is true when all StatefulSet replicas are ready and rolled out.
	// +optional
	Ready *bool `json:"ready,omitempty"`
	// Members are the cluster members as reported by their leases.
	// +optional
	Members []EtcdMemberStatus `json:"members,omitempty"`
	// PeerUrlTLSEnabled tells whether every member's peer URL is https.
	// +optional
	PeerUrlTLSEnabled *bool `json:"peerUrlTLSEnabled,omitempty"`
	// Selector is the pod label selector in string form, for the scale subresource.
	// +optional
	Selector *string `json:"selector,omitempty"`
	// LabelSelector is Selector in structured form (the upstream etcd-druid's field, deprecated there);
	// druid writes both.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// BootstrapWithExistingClusterMembers are the members of an existing cluster this one joined (the
	// upstream etcd-druid's field). Stored so that it round-trips; this druid never writes it.
	// +optional
	BootstrapWithExistingClusterMembers []BootstrapJoinedMember `json:"bootstrapWithExistingClusterMembers,omitempty"`
	// ClusterSize is the number of members the cluster was last bootstrapped or scaled to.
	// +optional
	ClusterSize *int32 `json:"clusterSize,omitempty"`
	// LastFullSnapshot is the latest full snapshot the backup leader's sidecar stored, as recorded in the
	// full snapshot lease (<name>-full-snap). Unset without a backup store and until the first full
	// snapshot is recorded. (ours; upstream etcd-druid does not record it.)
	// +optional
	LastFullSnapshot *SnapshotStatus `json:"lastFullSnapshot,omitempty"`
	// LastDeltaSnapshot is the latest snapshot the backup leader's sidecar stored, as recorded in the delta
	// snapshot lease (<name>-delta-snap). The sidecar renews that lease after a full snapshot too (a full
	// snapshot covers every revision a delta would), so this is the latest snapshot of either kind: the
	// revision up to which the backup is complete. Unset without a backup store and until the first
	// snapshot is recorded. (ours; upstream etcd-druid does not record it.)
	// +optional
	LastDeltaSnapshot *SnapshotStatus `json:"lastDeltaSnapshot,omitempty"`
}

// SnapshotStatus is one snapshot as a snapshot lease records it. The field names follow the snapshot
// record etcd-druid's proposal DEP-04 (EtcdMember, status.snapshots.lastFull/lastDelta) gives the same
// facts: name, endRevision and timestamp.
type SnapshotStatus struct {
	// Name is the snapshot's object name in the store (base name, e.g.
	// Full-00000000-00001234-1700000000.gz): the lease's annotation snapshot.etcd.gardener.cloud/name,
	// which this project's sidecar writes; unset when the lease carries none (an upstream sidecar).
	// +optional
	Name *string `json:"name,omitempty"`
	// EndRevision is the last etcd revision the snapshot holds: the lease's holderIdentity, a decimal
	// revision written by the sidecar after the upload.
	EndRevision int64 `json:"endRevision"`
	// Timestamp is the lease's renewTime: when the sidecar last recorded EndRevision as stored, i.e. the
	// snapshot's upload or, on a quiet cluster, the latest delta period in which etcd had nothing newer.
	Timestamp metav1.Time `json:"timestamp"`
}

// ConditionType is the type of an Etcd condition.
type ConditionType string

// ConditionStatus is the status of a condition.
type ConditionStatus string

const (
	// ConditionTrue means the condition holds.
	ConditionTrue ConditionStatus = "True"
	// ConditionFalse means the condition does not hold.
	ConditionFalse ConditionStatus = "False"
	// ConditionUnknown means druid cannot tell.
	ConditionUnknown ConditionStatus = "Unknown"
)

// Condition is one aspect of the cluster's health. It is druid's own shape (with lastUpdateTime), not
// metav1.Condition, because that is what stored Etcds carry.
type Condition struct {
	Type   ConditionType   `json:"type"`
	Status ConditionStatus `json:"status"`
	// LastTransitionTime is when the status last changed.
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// LastUpdateTime is when druid last confirmed the condition.
	LastUpdateTime metav1.Time `json:"lastUpdateTime"`
	Reason         string      `json:"reason"`
	Message        string      `json:"message"`
}

// ErrorCode is a stable, machine-readable error code (e.g. ERR_SYNC_STATEFULSET).
type ErrorCode string

// LastError is one error of the last reconcile.
type LastError struct {
	Code        ErrorCode   `json:"code"`
	Description string      `json:"description"`
	ObservedAt  metav1.Time `json:"observedAt"`
}

// LastOperationType is the kind of operation druid ran.
type LastOperationType string

// LastOperationState is how far an operation got.
type LastOperationState string

const (
	LastOperationTypeCreate    LastOperationType = "Create"
	LastOperationTypeReconcile LastOperationType = "Reconcile"
	LastOperationTypeDelete    LastOperationType = "Delete"

	LastOperationStateProcessing LastOperationState = "Processing"
	LastOperationStateSucceeded  LastOperationState = "Succeeded"
	LastOperationStateError      LastOperationState = "Error"
	LastOperationStateRequeue    LastOperationState = "Requeue"
)

// LastOperation is the last operation druid ran on an Etcd.
type LastOperation struct {
	Type        LastOperationType  `json:"type"`
	State       LastOperationState `json:"state"`
	Description string             `json:"description"`
	// RunID identifies one run of the operation, to correlate logs.
	RunID          string      `json:"runID"`
	LastUpdateTime metav1.Time `json:"lastUpdateTime"`
}

// EtcdRole is a member's raft role.
type EtcdRole string

const (
	// EtcdRoleLeader is the raft leader.
	EtcdRoleLeader EtcdRole = "Leader"
	// EtcdRoleMember is any other voting member.
	EtcdRoleMember EtcdRole = "Member"
)

// EtcdMemberConditionStatus is a member's health as druid derives it from its lease.
type EtcdMemberConditionStatus string

const (
	EtcdMemberStatusReady    EtcdMemberConditionStatus = "Ready"
	EtcdMemberStatusNotReady EtcdMemberConditionStatus = "NotReady"
	EtcdMemberStatusUnknown  EtcdMemberConditionStatus = "Unknown"
)

// EtcdMemberStatus is one member of the cluster as reported by its lease.
type EtcdMemberStatus struct {
	// Name is the member name, which is also the lease and pod name.
	Name string `json:"name"`
	// ID is the etcd member ID in hex.
	// +optional
	ID *string `json:"id,omitempty"`
	// Role is Leader or Member.
	// +optional
	Role   *EtcdRole                 `json:"role,omitempty"`
	Status EtcdMemberConditionStatus `json:"status"`
	Reason string                    `json:"reason"`
	// LastTransitionTime is when the status last changed.
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}

// BootstrapJoinedMember is a member of an existing cluster that this cluster joined.
type BootstrapJoinedMember struct {
	// Name is the member name.
	Name string `json:"name"`
	// PeerURLs are the member's peer URLs.
	// +optional
	PeerURLs []string `json:"peerUrls,omitempty"`
	// JoinedAt is when the join was recorded.
	// +optional
	JoinedAt *metav1.Time `json:"joinedAt,omitempty"`
}
