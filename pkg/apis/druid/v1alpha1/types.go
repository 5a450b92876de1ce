package v1alpha1

import (
	druidapicommon "github.com/gardener/etcd-druid/api/common"
	upstream "github.com/gardener/etcd-druid/api/core/v1alpha1"
)

// The druid.gardener.cloud/v1alpha1 API is upstream etcd-druid's API module
// (github.com/gardener/etcd-druid/api, the version go.mod pins, which is the one Gardener pins). Its CRDs are
// the ones installed, so a field that is not in these types does not survive the apiserver; what druid keeps
// beyond them lives in annotations and leases (see ClusterSizeAnnotation and SnapshotStatus). The aliases
// let druid's code keep one import path.
type (
	Etcd                               = upstream.Etcd
	EtcdList                           = upstream.EtcdList
	EtcdSpec                           = upstream.EtcdSpec
	EtcdStatus                         = upstream.EtcdStatus
	EtcdConfig                         = upstream.EtcdConfig
	SharedConfig                       = upstream.SharedConfig
	SchedulingConstraints              = upstream.SchedulingConstraints
	CompactionMode                     = upstream.CompactionMode
	MetricsLevel                       = upstream.MetricsLevel
	BboltFreelistType                  = upstream.BboltFreelistType
	MemberPeerURLs                     = upstream.MemberPeerURLs
	BootstrapWithExistingCluster       = upstream.BootstrapWithExistingCluster
	BootstrapExistingMember            = upstream.BootstrapExistingMember
	BootstrapWithExistingClusterStatus = upstream.BootstrapWithExistingClusterStatus
	BootstrapJoinedMember              = upstream.BootstrapJoinedMember
	ClientService                      = upstream.ClientService
	BackupSpec                         = upstream.BackupSpec
	GarbageCollectionPolicy            = upstream.GarbageCollectionPolicy
	SnapshotCompactionSpec             = upstream.SnapshotCompactionSpec
	CompressionPolicy                  = upstream.CompressionPolicy
	CompressionSpec                    = upstream.CompressionSpec
	LeaderElectionSpec                 = upstream.LeaderElectionSpec
	SecretReference                    = upstream.SecretReference
	TLSConfig                          = upstream.TLSConfig
	PeerTLSConfig                      = upstream.PeerTLSConfig
	StorageProvider                    = upstream.StorageProvider
	StoreSpec                          = upstream.StoreSpec
	CrossVersionObjectReference        = upstream.CrossVersionObjectReference
	ConditionType                      = upstream.ConditionType
	ConditionStatus                    = upstream.ConditionStatus
	Condition                          = upstream.Condition
	EtcdRole                           = upstream.EtcdRole
	EtcdMemberConditionStatus          = upstream.EtcdMemberConditionStatus
	EtcdMemberStatus                   = upstream.EtcdMemberStatus

	EtcdCopyBackupsTask       = upstream.EtcdCopyBackupsTask
	EtcdCopyBackupsTaskList   = upstream.EtcdCopyBackupsTaskList
	EtcdCopyBackupsTaskSpec   = upstream.EtcdCopyBackupsTaskSpec
	EtcdCopyBackupsTaskStatus = upstream.EtcdCopyBackupsTaskStatus
	WaitForFinalSnapshotSpec  = upstream.WaitForFinalSnapshotSpec

	EtcdOpsTask            = upstream.EtcdOpsTask
	EtcdOpsTaskList        = upstream.EtcdOpsTaskList
	EtcdOpsTaskSpec        = upstream.EtcdOpsTaskSpec
	EtcdOpsTaskConfig      = upstream.EtcdOpsTaskConfig
	EtcdOpsTaskStatus      = upstream.EtcdOpsTaskStatus
	OnDemandSnapshotType   = upstream.OnDemandSnapshotType
	OnDemandSnapshotConfig = upstream.OnDemandSnapshotConfig
	TaskState              = upstream.TaskState

	ErrorCode          = druidapicommon.ErrorCode
	LastError          = druidapicommon.LastError
	LastOperation      = druidapicommon.LastOperation
	LastOperationType  = druidapicommon.LastOperationType
	LastOperationState = druidapicommon.LastOperationState
)

// Upstream's constants, under the names druid's code uses.
const (
	ConditionTrue    = upstream.ConditionTrue
	ConditionFalse   = upstream.ConditionFalse
	ConditionUnknown = upstream.ConditionUnknown

	ConditionTypeReady             = upstream.ConditionTypeReady
	ConditionTypeAllMembersReady   = upstream.ConditionTypeAllMembersReady
	ConditionTypeAllMembersUpdated = upstream.ConditionTypeAllMembersUpdated
	ConditionTypeBackupReady       = upstream.ConditionTypeBackupReady
	ConditionTypeDataVolumesReady  = upstream.ConditionTypeDataVolumesReady
	// ConditionTypeClusterIDMismatch is True when members report different etcd cluster IDs in their
	// leases: one of them was bootstrapped into a cluster of its own (split brain).
	ConditionTypeClusterIDMismatch = upstream.ConditionTypeClusterIDMismatch
	// ConditionTypeBootstrappedWithExistingCluster reports the join of spec.etcd.bootstrapWithExistingCluster:
	// False while members are joining, True (for good) once all have.
	ConditionTypeBootstrappedWithExistingCluster = upstream.ConditionTypeBootstrappedWithExistingCluster

	EtcdMemberStatusReady    = upstream.EtcdMemberStatusReady
	EtcdMemberStatusNotReady = upstream.EtcdMemberStatusNotReady
	EtcdMemberStatusUnknown  = upstream.EtcdMemberStatusUnknown
	EtcdRoleLeader           = upstream.EtcdRoleLeader
	EtcdRoleMember           = upstream.EtcdRoleMember

	LastOperationTypeCreate      = upstream.LastOperationTypeCreate
	LastOperationTypeReconcile   = upstream.LastOperationTypeReconcile
	LastOperationTypeDelete      = upstream.LastOperationTypeDelete
	LastOperationStateProcessing = upstream.LastOperationStateProcessing
	LastOperationStateSucceeded  = upstream.LastOperationStateSucceeded
	LastOperationStateError      = upstream.LastOperationStateError
	LastOperationStateRequeue    = upstream.LastOperationStateRequeue

	Periodic           = upstream.Periodic
	Revision           = upstream.Revision
	Basic              = upstream.Basic
	Extensive          = upstream.Extensive
	BboltFreelistMap   = upstream.BboltFreelistMap
	BboltFreelistArray = upstream.BboltFreelistArray
	GzipCompression    = upstream.GzipCompression
	LzwCompression     = upstream.LzwCompression
	ZlibCompression    = upstream.ZlibCompression
	// Upstream declares the garbage collection policies untyped; typed here so that they fit
	// spec.backup.garbageCollectionPolicy.
	GarbageCollectionPolicyExponential GarbageCollectionPolicy = upstream.GarbageCollectionPolicyExponential
	GarbageCollectionPolicyLimitBased  GarbageCollectionPolicy = upstream.GarbageCollectionPolicyLimitBased

	EtcdCopyBackupsTaskSucceeded = upstream.EtcdCopyBackupsTaskSucceeded
	EtcdCopyBackupsTaskFailed    = upstream.EtcdCopyBackupsTaskFailed

	OnDemandSnapshotTypeFull     = upstream.OnDemandSnapshotTypeFull
	OnDemandSnapshotTypeDelta    = upstream.OnDemandSnapshotTypeDelta
	TaskStatePending             = upstream.TaskStatePending
	TaskStateInProgress          = upstream.TaskStateInProgress
	TaskStateSucceeded           = upstream.TaskStateSucceeded
	TaskStateFailed              = upstream.TaskStateFailed
	TaskStateRejected            = upstream.TaskStateRejected
	LastOperationTypeAdmit       = upstream.LastOperationTypeAdmit
	LastOperationTypeExecution   = upstream.LastOperationTypeExecution
	LastOperationTypeCleanup     = upstream.LastOperationTypeCleanup
	LastOperationStateInProgress = upstream.LastOperationStateInProgress
	LastOperationStateCompleted  = upstream.LastOperationStateCompleted
	LastOperationStateFailed     = upstream.LastOperationStateFailed
)
