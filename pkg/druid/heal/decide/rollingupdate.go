package decide

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// RollingUpdateAllowed tells whether the spec flow may change the pod template of sts now, judged by the
// stored status (the rule for rolling updates to etcd members): a rolling update restarts every member one
// after the other, so it waits while AllMembersReady or BackupReady is False — a degraded cluster could
// lose its quorum on the next restart, and without a recent backup a lost quorum loses data.
//
// Exceptions, where rolling cannot make things worse and may be what recovers the cluster:
//   - no StatefulSet yet, or one at 0 replicas (hibernated, or scaled to 0 by a quorum-loss recovery):
//     no pod is restarted;
//   - Ready is False (quorum already lost): the members are not serving anyway, and the new template
//     (e.g. a fixed image or configuration) may be the remedy.
//
// Missing or Unknown conditions (a cluster that has not reported yet) do not hold anything back, nor do
// NotChecked ones: spec.replicas is 0, and the status they keep from before must not hold the hibernation
// (whose ConfigMap, and so pod template, changes) back for ever.
func RollingUpdateAllowed(status druidv1alpha1.EtcdStatus, sts *appsv1.StatefulSet) (bool, string) {
	if sts == nil || ptr.Deref(sts.Spec.Replicas, 1) == 0 {
		return true, "no member pod runs"
	}
	if c := judged(status, druidv1alpha1.ConditionTypeReady); c != nil && c.Status == druidv1alpha1.ConditionFalse {
		return true, "quorum is lost already; the new pod template may be needed to recover"
	}
	for _, t := range []druidv1alpha1.ConditionType{druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTypeBackupReady} {
		if c := judged(status, t); c != nil && c.Status == druidv1alpha1.ConditionFalse {
			return false, fmt.Sprintf("rolling update of the members held back while %s is False (%s: %s)", t, c.Reason, c.Message)
		}
	}
	return true, "the cluster is healthy"
}

// judged is the condition of type t unless it is NotChecked (hibernated: not a judgment of the members).
func judged(status druidv1alpha1.EtcdStatus, t druidv1alpha1.ConditionType) *druidv1alpha1.Condition {
	if c := druidv1alpha1.FindCondition(status.Conditions, t); c != nil && c.Reason != druidv1alpha1.ReasonNotChecked {
		return c
	}
	return nil
}
