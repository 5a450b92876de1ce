package v1alpha1

import (
	druidapicommon "github.com/gardener/etcd-druid/api/common"
	upstream "github.com/gardener/etcd-druid/api/core/v1alpha1"
)

// Annotations on an Etcd that steer druid (upstream etcd-druid's API).
const (
	// GardenerOperationAnnotation asks for a spec reconcile when druid's auto-reconcile is off; druid removes it
	// after status.observedGeneration is written.
	GardenerOperationAnnotation = upstream.GardenerOperationAnnotation
	// DruidOperationAnnotation is druid's own name for GardenerOperationAnnotation.
	DruidOperationAnnotation = upstream.DruidOperationAnnotation
	// OperationReconcile is the value of the operation annotations that asks for a reconcile.
	OperationReconcile = upstream.DruidOperationReconcile
	// GardenerTimestampAnnotation is set by Gardener together with the operation annotation, so that an
	// identical request still changes the object.
	GardenerTimestampAnnotation = "gardener.cloud/timestamp"
	// SuspendEtcdSpecReconcileAnnotation skips spec reconciles (status is still updated, a Warning is emitted).
	SuspendEtcdSpecReconcileAnnotation = upstream.SuspendEtcdSpecReconcileAnnotation
	// DisableEtcdComponentProtectionAnnotation lets changes to druid-managed objects through the protection
	// webhook.
	DisableEtcdComponentProtectionAnnotation = upstream.DisableEtcdComponentProtectionAnnotation
	// AllowUnhealthyPodEvictionAnnotation sets the PDB's unhealthyPodEvictionPolicy to AlwaysAllow.
	AllowUnhealthyPodEvictionAnnotation = "resources.druid.gardener.cloud/allow-unhealthy-pod-eviction"
	// ScaledToMultiNodeAnnotation is set on the StatefulSet by older druids during scale-up; it is
	// harmless and never required.
	ScaledToMultiNodeAnnotation = "gardener.cloud/scaled-to-multi-node"
	// ConfigMapChecksumAnnotation on the pod template rolls the pods when the etcd configuration changes.
	ConfigMapChecksumAnnotation = "checksum/etcd-configmap"
	// TLSEnabledAnnotation on a member lease tells whether the member's peer URL is https.
	TLSEnabledAnnotation = "member.etcd.gardener.cloud/tls-enabled"
	// LeftClusterAnnotation on a member lease says that the member is no longer in the etcd membership:
	// the backup leader writes it (value: the member ID of the lease's holderIdentity, hex) after a scale-in
	// removed the member, and druid shrinks the StatefulSet only once every member it drops carries it.
	LeftClusterAnnotation = "member.etcd.gardener.cloud/left-cluster"
	// JoinedExistingClusterAnnotation ("true") on a member lease says that the Etcd's members joined the
	// existing cluster its spec.etcd.bootstrapWithExistingCluster names (status.bootstrapWithExistingCluster
	// is set). Druid writes it on every member lease from then on, also on the empty leases a hibernated
	// Etcd wakes up with: a member without data that nothing else tells its Etcd's cluster (no cluster ID
	// recorded, none of its own members answering) then waits for its own members instead of joining
	// whatever cluster answers at the source's endpoints, which only the first members may do.
	JoinedExistingClusterAnnotation = "member.etcd.gardener.cloud/joined-existing-cluster"
	// AlarmsAnnotation on a member lease lists the etcd alarms active in the cluster (NOSPACE, CORRUPT;
	// comma-separated) as the member's sidecar last read them, "" when none; druid's EtcdAlarm condition
	// follows it. Upstream's sidecar does not write it.
	AlarmsAnnotation = "member.etcd.gardener.cloud/alarms"
	// NoSpaceCannotRecoverAnnotation on the backup leader's member lease says why its NOSPACE recovery
	// cannot disarm the alarm (the data in use does not fit under the quota); absent otherwise.
	NoSpaceCannotRecoverAnnotation = "member.etcd.gardener.cloud/nospace-cannot-recover"
	// LeftClusterNeverJoined is the LeftClusterAnnotation's value on a lease that was never renewed and
	// whose member the backup leader does not find in the membership: a member that never ran.
	LeftClusterNeverJoined = "never-joined"
)

// FinalizerName is set on every Etcd and on every Secret an Etcd references.
const FinalizerName = druidapicommon.EtcdFinalizerName

// Labels on every object druid manages. ManagedBy and PartOf together form the StatefulSet selector.
const (
	LabelManagedByKey   = upstream.LabelManagedByKey
	LabelManagedByValue = upstream.LabelManagedByValue
	LabelPartOfKey      = upstream.LabelPartOfKey
	LabelComponentKey   = upstream.LabelComponentKey
	LabelAppNameKey     = upstream.LabelAppNameKey
)

// The legacy member selector of etcd-druid releases before v0.22: `instance: <etcd>`, `name: etcd`. A
// StatefulSet such a release created keeps it (a selector is immutable) until it is recreated, and druid
// then selects the members with it (PodSelector), so these keys claim membership as much as ManagedLabels.
const (
	LabelLegacyInstanceKey = "instance"
	LabelLegacyNameKey     = "name"
	LabelLegacyNameValue   = "etcd"
)

// LegacyMemberLabels are the Etcd's member labels under the legacy selector.
func LegacyMemberLabels(e *Etcd) map[string]string {
	return map[string]string{LabelLegacyInstanceKey: e.Name, LabelLegacyNameKey: LabelLegacyNameValue}
}

// Values of LabelComponentKey, one per kind of managed object.
const (
	ComponentStatefulSet    = "etcd-statefulset"
	ComponentConfigMap      = "etcd-configmap"
	ComponentMemberLease    = "etcd-member-lease"
	ComponentSnapshotLease  = "etcd-snapshot-lease"
	ComponentClientService  = "etcd-client-service"
	ComponentPeerService    = "etcd-peer-service"
	ComponentPDB            = "etcd-pdb"
	ComponentRole           = "etcd-role"
	ComponentRoleBinding    = "etcd-role-binding"
	ComponentServiceAccount = "etcd-service-account"
	ComponentNetworkPolicy  = "etcd-network-policy"
)

// Condition reasons of an Etcd.
const (
	ReasonQuorate                 = "Quorate"
	ReasonQuorumLost              = "QuorumLost"
	ReasonNoMembersInStatus       = "NoMembersInStatus"
	ReasonAllMembersReady         = "AllMembersReady"
	ReasonNotAllMembersReady      = "NotAllMembersReady"
	ReasonAllMembersUpdated       = "AllMembersUpdated"
	ReasonNotAllMembersUpdated    = "NotAllMembersUpdated"
	ReasonStatefulSetNotFound     = "StatefulSetNotFound"
	ReasonBackupSucceeded         = "BackupSucceeded"
	ReasonBackupFailed            = "BackupFailed"
	ReasonUnknown                 = "Unknown"
	ReasonNoWarningsForDataVolume = "NoWarningsFoundForDataVolumes"
	ReasonWarningsForDataVolume   = "FoundWarningsForDataVolumes"
	ReasonNotChecked              = "NotChecked"
	// Reasons of ClusterIDMismatch, upstream druid's.
	ReasonMultipleClusterIDs       = "MultipleClusterIDsDetected"
	ReasonNoClusterIDMismatch      = "NoClusterIDMismatchDetected"
	ReasonNoClusterID              = "NoClusterIDDetected"
	ReasonUnparsableHolderIdentity = "UnableToParseLeaseHolderIdentity"
	// Reasons of EtcdAlarm (ours).
	ReasonNoAlarm              = "NoAlarm"
	ReasonNoSpace              = "NoSpace"
	ReasonNoSpaceCannotRecover = "NoSpaceCannotRecover"
	ReasonAlarmActive          = "AlarmActive"
)

// ConditionTypeEtcdAlarm is True while etcd reports an active alarm (NOSPACE: every write is refused;
// CORRUPT), as the members' sidecars read it into their leases (AlarmsAnnotation). It is not upstream
// druid's: Etcds whose sidecars do not report alarms (upstream's images) do not get it.
const ConditionTypeEtcdAlarm ConditionType = "EtcdAlarm"

// Reasons of a member status.
const (
	MemberReasonLeaseSucceeded             = "LeaseSucceeded"
	MemberReasonLeaseExpired               = "LeaseExpired"
	MemberReasonPodNotReady                = "PodNotReady"
	MemberReasonUnknownGracePeriodExceeded = "UnknownGracePeriodExceeded"
)

// ClusterSizeAnnotation on the Etcd's StatefulSet is the number of members the etcd cluster was last
// bootstrapped or scaled to (decimal), which druid computes the quorum against. Druid alone writes it: it is
// druid's own record, kept on a druid-owned object (guarded by the component-protection webhook) because
// upstream etcd-druid's CRD has no status field for it and prunes any it does not know.
const ClusterSizeAnnotation = "druid.gardener.cloud/cluster-size"

// Annotations of a NEW Etcd that starts from another cluster's backups (a point-in-time restore into a new
// cluster): its first member restores from the prefix RestoreSourcePrefixAnnotation names, in the same
// store (same container and credentials as spec.backup.store), up to RestoreSourceRevisionAnnotation
// (exactly) or RestoreSourceTimeAnnotation (the newest snapshot at or before it; RFC3339), neither: the
// latest state, and from then on backs up into its own spec.backup.store.prefix. They are this project's
// (upstream etcd-druid has no such restore), honoured only at creation: the sidecar reads the source only
// while its own prefix holds no backup and the member holds no data, and never writes to it. The
// validation webhook refuses them added or changed later.
const (
	RestoreSourcePrefixAnnotation   = "restore.gardener-etcd.io/source-prefix"
	RestoreSourceRevisionAnnotation = "restore.gardener-etcd.io/source-revision"
	RestoreSourceTimeAnnotation     = "restore.gardener-etcd.io/source-time"
)

// RestoreSourceAnnotations are the three, in the order they are checked and rendered.
var RestoreSourceAnnotations = []string{RestoreSourcePrefixAnnotation, RestoreSourceRevisionAnnotation, RestoreSourceTimeAnnotation}
