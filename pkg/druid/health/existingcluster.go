package health

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Reasons of the BootstrappedWithExistingCluster condition, upstream etcd-druid's.
const (
	ReasonBootstrapInProgress = "BootstrapInProgress"
	ReasonBootstrapSucceeded  = "BootstrapSucceeded"
)

// setExistingClusterStatus reports the join of an Etcd whose spec.etcd.bootstrapWithExistingCluster names a
// source cluster, as upstream etcd-druid does: BootstrappedWithExistingCluster is False while fewer than
// spec.replicas members report Ready, and True once all do (a member only serves once it joined the source
// cluster: the sidecar never bootstraps one of its own while the source is named). At that moment
// status.bootstrapWithExistingCluster records the source members it joined, once: the record and the True
// condition are kept from then on, also when members fail later or the spec field is removed, because
// they say what happened at creation.
func setExistingClusterStatus(status *druidv1alpha1.EtcdStatus, etcd *druidv1alpha1.Etcd, now time.Time) {
	t := druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster
	if status.BootstrapWithExistingCluster != nil {
		status.Conditions = SetCondition(status.Conditions, condition(t, druidv1alpha1.ConditionTrue, ReasonBootstrapSucceeded,
			"All members have successfully joined the existing cluster"), now)
		return
	}
	source := etcd.Spec.Etcd.BootstrapWithExistingCluster
	if source == nil || len(source.Members) == 0 {
		return
	}
	if msg := joinPending(status.Members, etcd.Spec.Replicas); msg != "" {
		status.Conditions = SetCondition(status.Conditions, condition(t, druidv1alpha1.ConditionFalse, ReasonBootstrapInProgress, msg), now)
		return
	}
	joined := make([]druidv1alpha1.BootstrapJoinedMember, 0, len(source.Members))
	for _, m := range source.Members {
		joined = append(joined, druidv1alpha1.BootstrapJoinedMember{Name: m.Name, PeerURLs: append([]string(nil), m.PeerURLs...)})
	}
	status.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingClusterStatus{JoinedAt: metav1.NewTime(now), Members: joined}
	status.Conditions = SetCondition(status.Conditions, condition(t, druidv1alpha1.ConditionTrue, ReasonBootstrapSucceeded,
		"All members have successfully joined the existing cluster"), now)
}

// joinPending says why the join is not complete yet, or "" when every member reports Ready.
func joinPending(members []druidv1alpha1.EtcdMemberStatus, replicas int32) string {
	if len(members) < int(replicas) {
		return "Not all members have joined the cluster yet"
	}
	for _, m := range members {
		if m.Status != druidv1alpha1.EtcdMemberStatusReady {
			return "Not all members are ready"
		}
	}
	return ""
}
