// Package health derives an Etcd's status from what the cluster reports: member health from the member
// leases and pods, the conditions druid reports, and the replica counts from the StatefulSet. Everything here
// is a pure function of an Observed snapshot and a time, so that the status flow, the decision-table
// healing and the tests all judge the same input the same way.
package health

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
)

// Observed is everything the status of one Etcd is derived from, read in one pass by the status flow.
// The healing actions take the same struct, so they act on exactly what the status shows.
type Observed struct {
	// Etcd as stored (with its current status); its spec is used as is, so pass a defaulted copy.
	Etcd *druidv1alpha1.Etcd
	// StatefulSet is nil when it does not exist.
	StatefulSet *appsv1.StatefulSet
	// Pods of the StatefulSet by pod name.
	Pods map[string]*corev1.Pod
	// MemberLeases of the Etcd (any ordinal, including superfluous ones).
	MemberLeases []coordinationv1.Lease
	// SnapshotLeases of the Etcd (nil entries without a store or before creation).
	SnapshotLeases SnapshotLeases
	// DataVolumeWarnings are the messages of warning events on the members' PVCs.
	DataVolumeWarnings []string
	// ClusterSize is the cluster size druid recorded last (RecordedClusterSize); 0 when none is known.
	ClusterSize int32
}

// ComputeStatus returns the Etcd's status with every field the status flow owns recomputed at now:
// members, the conditions Ready, AllMembersReady, AllMembersUpdated, DataVolumesReady,
// ClusterIDMismatch, BackupReady, EtcdAlarm and BootstrappedWithExistingCluster (with
// status.bootstrapWithExistingCluster), the replica counts, ready, peerUrlTLSEnabled, selector, the
// StatefulSet reference. The cluster size to record next is NextClusterSize, the last snapshots are
// LastSnapshots: upstream's status has no fields for them.
// Fields owned by the spec flow (observedGeneration, lastOperation, lastErrors, other conditions) are kept.
func ComputeStatus(o Observed, th Thresholds, now time.Time) druidv1alpha1.EtcdStatus {
	etcd := o.Etcd
	status := *etcd.Status.DeepCopy()
	status.Members = Members(etcd, o.MemberLeases, o.Pods, th, now)
	status.Selector = ptr.To(labels.SelectorFromSet(druidv1alpha1.ManagedLabels(etcd)).String())
	status.LabelSelector = &metav1.LabelSelector{MatchLabels: druidv1alpha1.ManagedLabels(etcd)}
	status.PeerUrlTLSEnabled = PeerURLTLSEnabled(o.MemberLeases, etcd.Spec.Replicas)
	setReplicas(&status, o.StatefulSet)

	replicas := etcd.Spec.Replicas
	if replicas == 0 {
		for _, t := range []druidv1alpha1.ConditionType{druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTypeAllMembersReady,
			druidv1alpha1.ConditionTypeAllMembersUpdated, druidv1alpha1.ConditionTypeDataVolumesReady, druidv1alpha1.ConditionTypeClusterIDMismatch} {
			status.Conditions = SetCondition(status.Conditions, NotChecked(t, druidv1alpha1.FindCondition(status.Conditions, t)), now)
		}
		// No member runs to report alarms; they are reported again after the wake-up.
		status.Conditions = RemoveCondition(status.Conditions, druidv1alpha1.ConditionTypeEtcdAlarm)
		if etcd.Spec.Backup.Store != nil {
			t := druidv1alpha1.ConditionTypeBackupReady
			status.Conditions = SetCondition(status.Conditions, NotChecked(t, druidv1alpha1.FindCondition(status.Conditions, t)), now)
		} else {
			status.Conditions = RemoveCondition(status.Conditions, druidv1alpha1.ConditionTypeBackupReady)
		}
		return status
	}

	setExistingClusterStatus(&status, etcd, now)
	ready := ReadyCondition(status.Members, ClusterSizeForQuorum(o, len(status.Members)))
	status.Conditions = SetCondition(status.Conditions, ready, now)
	status.Conditions = SetCondition(status.Conditions, AllMembersReadyCondition(status.Members, replicas), now)
	status.Conditions = SetCondition(status.Conditions, AllMembersUpdatedCondition(o.StatefulSet), now)
	status.Conditions = SetCondition(status.Conditions, DataVolumesReadyCondition(o.StatefulSet, o.DataVolumeWarnings), now)
	status.Conditions = SetCondition(status.Conditions, ClusterIDMismatchCondition(status.Members, o.MemberLeases), now)
	if alarm, reported := EtcdAlarmCondition(status.Members, o.MemberLeases); reported {
		status.Conditions = SetCondition(status.Conditions, alarm, now)
	} else {
		status.Conditions = RemoveCondition(status.Conditions, druidv1alpha1.ConditionTypeEtcdAlarm)
	}
	if etcd.Spec.Backup.Store != nil {
		status.Conditions = SetCondition(status.Conditions, BackupReadyCondition(etcd.Spec.Backup, o.SnapshotLeases, now), now)
	} else {
		status.Conditions = RemoveCondition(status.Conditions, druidv1alpha1.ConditionTypeBackupReady)
	}
	return status
}

// LastSnapshots are the latest full and delta snapshots of the Etcd's backup, from the snapshot leases the
// backup leader's sidecar renews (also while hibernated: the backup stays). The full one is the
// StatefulSet's fullsnapshot.Record instead while that is newer than the full snapshot lease. Both are nil
// without a backup store and until the sidecar recorded one.
func LastSnapshots(o Observed) (full, delta *druidv1alpha1.SnapshotStatus) {
	if o.Etcd.Spec.Backup.Store == nil {
		return nil, nil
	}
	full = SnapshotFromLease(o.SnapshotLeases.Full)
	if record, ok := fullsnapshot.RecordOf(o.StatefulSet); ok {
		full = fullsnapshot.Newer(full, record.Snapshot())
	}
	return full, SnapshotFromLease(o.SnapshotLeases.Delta)
}

// ClusterSizeForQuorum is the cluster size the Ready condition computes the quorum against: the recorded
// cluster size (spec.replicas before the first bootstrap), or more members when more have joined since.
func ClusterSizeForQuorum(o Observed, members int) int32 {
	size := o.ClusterSize
	if size == 0 {
		size = o.Etcd.Spec.Replicas
	}
	return max(size, int32(members))
}

// NextClusterSize is the cluster size druid records after computing status (ClusterSizeAnnotation):
// unchanged while hibernated (spec.replicas 0), spec.replicas while no member has bootstrapped (the
// cluster is being created or bootstrapped again), len(members) while the cluster is quorate, and
// unchanged otherwise (a cluster that lost quorum keeps the size it had).
func NextClusterSize(o Observed, computed druidv1alpha1.EtcdStatus) int32 {
	members := computed.Members
	ready := druidv1alpha1.FindCondition(computed.Conditions, druidv1alpha1.ConditionTypeReady)
	switch {
	case o.Etcd.Spec.Replicas == 0:
		return o.ClusterSize
	case len(members) == 0:
		return o.Etcd.Spec.Replicas
	case ready != nil && ready.Status == druidv1alpha1.ConditionTrue:
		return int32(len(members))
	default:
		return ClusterSizeForQuorum(o, len(members))
	}
}

// PeerURLTLSEnabled is true when every member lease says tls-enabled "true", false when one does not (a
// member that has not reported yet counts as not enabled), and nil when there is no member lease to ask.
func PeerURLTLSEnabled(leases []coordinationv1.Lease, replicas int32) *bool {
	if len(leases) == 0 || replicas == 0 {
		return nil
	}
	for _, l := range leases {
		if l.Annotations[druidv1alpha1.TLSEnabledAnnotation] != "true" {
			return ptr.To(false)
		}
	}
	return ptr.To(true)
}

func setReplicas(status *druidv1alpha1.EtcdStatus, sts *appsv1.StatefulSet) {
	if sts == nil {
		status.Etcd = nil
		status.Replicas, status.ReadyReplicas, status.CurrentReplicas = 0, 0, 0
		status.Ready = ptr.To(false)
		return
	}
	status.Etcd = &druidv1alpha1.CrossVersionObjectReference{Kind: "StatefulSet", Name: sts.Name, APIVersion: appsv1.SchemeGroupVersion.String()}
	status.Replicas = sts.Status.Replicas
	status.ReadyReplicas = sts.Status.ReadyReplicas
	status.CurrentReplicas = sts.Status.CurrentReplicas
	status.Ready = ptr.To(sts.Status.ReadyReplicas == ptr.Deref(sts.Spec.Replicas, 1) && StatefulSetRolledOut(sts))
}
