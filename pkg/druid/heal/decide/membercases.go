package decide

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// quorumLossRecoveryInProgress continues a case 10 recovery that an earlier round started: the marker on
// the StatefulSet says so, whatever the members look like meanwhile (they vanish as the pods go).
func quorumLossRecoveryInProgress(in Input) []Action {
	phase := RecoveryPhaseOf(in.Observed.StatefulSet)
	if phase == RecoveryIdle {
		return nil
	}
	return []Action{{Case: CaseQuorumLost, Kind: KindContinueQuorumRecovery, Replicas: in.Observed.Etcd.Spec.Replicas,
		Message: fmt.Sprintf("quorum-loss recovery in progress (%s, %s)", StepLabel(phase.Step()), phase)}}
}

// quorumLost is case 10: Ready is False and at least half of the cluster has been NotReady past the grace
// period, so the members did not heal by themselves — or the members' sidecars confirm that a majority
// lost its data while the rest has no leader (confirmedByMembers), which needs no grace period. The cluster is bootstrapped again from the backup —
// only when no member counted as lost may still serve (mayServe), a backup store is configured and the
// backup holds every acknowledged write: BackupReady is not False, or it was True when the cluster lost
// its quorum (backupAtQuorumLoss); otherwise the operator is told.
func quorumLost(in Input) []Action {
	if !conditionIs(in.Computed, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse) {
		return nil
	}
	failed := notReadyPastGrace(in)
	size := clusterSize(in)
	etcd := in.Observed.Etcd
	what := fmt.Sprintf("quorum lost: %d of %d members NotReady for longer than %s (%s)", len(failed), size,
		in.Thresholds.NotReady, strings.Join(names(failed), ", "))
	if len(failed) == 0 || 2*int32(len(failed)) < size {
		if failed = confirmedByMembers(in, size); failed == nil {
			return nil
		}
		what = fmt.Sprintf("quorum lost for good, confirmed by the members: %d of %d members report no member data and no leader for at least %s (%s), the others no leader",
			len(failed), size, QuorumLossConfirmation, strings.Join(names(failed), ", "))
	}
	if serving := maybeServing(in, failed); len(serving) > 0 {
		return []Action{{Case: CaseQuorumLost, Kind: KindLeaseRenewalSuspected, Members: names(failed), Message: fmt.Sprintf(
			"member leases stale (%s) but the pod or etcd container of %s is Ready: etcd may still serve, so the lease renewals are suspect, not the quorum; druid does not bootstrap the cluster again",
			strings.Join(names(failed), ", "), strings.Join(serving, ", "))}}
	}
	switch {
	case etcd.Spec.Etcd.BootstrapWithExistingCluster != nil:
		// The members' data is the joined cluster's, whose source members these counts do not see; and
		// while the source is named, the members neither bootstrap nor restore from the store (they rejoin
		// it), so wiping their volumes could not bring the cluster back.
		return []Action{{Case: CaseQuorumLost, Kind: KindManualInterventionRequired, Members: names(failed),
			Message: what + "; the Etcd joins an existing cluster (spec.etcd.bootstrapWithExistingCluster), whose members druid does not count, so druid does not bootstrap the cluster again: manual action needed (bring the source members or these members back, or remove the field once the source members left the cluster)"}}
	case etcd.Spec.Backup.Store == nil:
		return []Action{{Case: CaseQuorumLost, Kind: KindManualInterventionRequired, Members: names(failed),
			Message: what + "; no backup store is configured, so druid does not bootstrap the cluster again: manual action needed"}}
	case conditionIs(in.Computed, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse):
		backup, lostAt, judged := backupAtQuorumLoss(in, size)
		if !judged || backup.Status != druidv1alpha1.ConditionTrue {
			why := "; BackupReady is False, so a restore could lose data: manual action needed"
			if judged {
				why = fmt.Sprintf("; BackupReady is False and was already not True when the cluster last had quorum (%s: %s), so a restore could lose data: manual action needed",
					lostAt.UTC().Format(time.RFC3339), backup.Message)
			}
			return []Action{{Case: CaseQuorumLost, Kind: KindManualInterventionRequired, Members: names(failed), Message: what + why}}
		}
		what += fmt.Sprintf("; BackupReady is False only because a cluster without quorum takes no snapshots: when it last had quorum (%s) the backup was current (%s)",
			lostAt.UTC().Format(time.RFC3339), backup.Message)
	}
	return []Action{{Case: CaseQuorumLost, Kind: KindStartQuorumRecovery, Members: names(failed), Replicas: etcd.Spec.Replicas,
		Message: what + "; bootstrapping the cluster again from the backup"}}
}

// minorityNotReady is case 9: the cluster is quorate and a minority of members has been NotReady past the
// grace period; deleting their pods restarts them (they rejoin, or re-register as new members).
//
// Safety: nothing is deleted unless the Ready members alone reach the quorum (deleting pods never touches
// them); at most clusterSize - quorum pods are deleted per round; a pod younger than the NotReady grace
// period (e.g. the replacement of a pod deleted earlier) gets its chance first; pods already terminating
// and members without a pod are skipped, and so are members whose etcd may still serve (maybeServing, as
// in case 10): a stale lease beside a Ready pod says the renewals stopped — a frozen sidecar, an API server
// outage — not that the member fell out, and restarting a serving member only costs the cluster a voter.
// BackupReady is deliberately not required: the members' data volumes survive the pod deletion, so the
// restart puts no data at risk.
func minorityNotReady(in Input) []Action {
	if !conditionIs(in.Computed, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue) {
		return nil
	}
	size := clusterSize(in)
	quorum := health.Quorum(size)
	if countReady(in.Computed.Members) < quorum {
		return nil
	}
	limit := int(size - quorum)
	etcd := in.Observed.Etcd
	var victims []string
	for _, m := range notReadyPastGrace(in) {
		if len(victims) == limit {
			break
		}
		ordinal, ok := druidv1alpha1.OrdinalOf(etcd, m.Name)
		if !ok || len(maybeServing(in, []druidv1alpha1.EtcdMemberStatus{m})) > 0 {
			continue
		}
		pod := in.Observed.Pods[druidv1alpha1.PodName(etcd, ordinal)]
		if pod == nil || pod.DeletionTimestamp != nil || in.Now.Sub(pod.CreationTimestamp.Time) < in.Thresholds.NotReady {
			continue
		}
		victims = append(victims, m.Name)
	}
	if len(victims) == 0 {
		return nil
	}
	return []Action{{Case: CaseMinorityNotReady, Kind: KindDeletePods, Members: victims, Message: fmt.Sprintf(
		"%s NotReady for longer than %s in a quorate cluster: deleting the pod(s) to restart them", strings.Join(victims, ", "), in.Thresholds.NotReady)}}
}

// scaleUp is case 11: spec.replicas is above the current cluster size. The spec flow does the work (raise
// the StatefulSet's replicas after the peer-TLS gate, create the new leases); the status flow only names it.
func scaleUp(in Input) []Action {
	desired, current := in.Observed.Etcd.Spec.Replicas, in.Observed.ClusterSize
	if current == 0 || desired <= current {
		return nil
	}
	return []Action{{Case: CaseScaleUp, Kind: KindScaleUpBySpecFlow, Replicas: desired, Message: fmt.Sprintf(
		"scale-up from %d to %d members is done by the spec reconcile", current, desired)}}
}

// scaleDown is case 12: spec.replicas is below the recorded cluster size and the spec flow has lowered the
// StatefulSet to spec.replicas (the highest ordinals are gone or going). The status flow deletes any lease
// of an ordinal ≥ spec.replicas that is left and records the new cluster size. The spec flow lowers the
// StatefulSet only after the backup leader removed those members from etcd (they leave while their pods run and quorum holds).
func scaleDown(in Input) []Action {
	desired, current := in.Observed.Etcd.Spec.Replicas, in.Observed.ClusterSize
	if desired >= current || ptr.Deref(in.Observed.StatefulSet.Spec.Replicas, 1) != desired {
		return nil
	}
	return []Action{{Case: CaseScaleDown, Kind: KindCompleteScaleDown, Replicas: desired, Members: leasesAtOrAbove(in, int(desired)),
		Message: fmt.Sprintf("scale-down from %d to %d members: the StatefulSet runs %d replicas", current, desired, desired)}}
}

// superfluousMembers is case 13: the StatefulSet runs exactly spec.replicas, yet member leases (and with
// them status entries) exist for ordinals ≥ spec.replicas. They are removed. A scale-down in progress
// (case 12) is left to scaleDown.
func superfluousMembers(in Input) []Action {
	desired := in.Observed.Etcd.Spec.Replicas
	if ptr.Deref(in.Observed.StatefulSet.Spec.Replicas, 1) != desired || in.Observed.ClusterSize > desired {
		return nil
	}
	extra := leasesAtOrAbove(in, int(desired))
	if len(extra) == 0 {
		return nil
	}
	return []Action{{Case: CaseSuperfluousMembers, Kind: KindRemoveSuperfluousMembers, Replicas: desired, Members: extra,
		Message: fmt.Sprintf("members %s are beyond spec.replicas %d: removing their status entries and leases", strings.Join(extra, ", "), desired)}}
}

// maybeServing are the members among lost whose etcd may still answer: the pod is Ready, or the etcd
// container is (the pod is not Ready when only the backup-restore sidecar — the one that renews the lease —
// is down). Readiness is what druid can see of etcd without credentials of its own; a stale lease next to
// a Ready etcd says that the renewals stopped (sidecar, API server, druid's webhook), not that the member
// lost its data or its peers, and wiping the volumes then would lose acknowledged writes.
func maybeServing(in Input, lost []druidv1alpha1.EtcdMemberStatus) []string {
	etcd := in.Observed.Etcd
	var serving []string
	for _, m := range lost {
		ordinal, ok := druidv1alpha1.OrdinalOf(etcd, m.Name)
		if !ok {
			continue
		}
		if pod := in.Observed.Pods[druidv1alpha1.PodName(etcd, ordinal)]; health.PodReady(pod) || etcdContainerReady(pod) {
			serving = append(serving, m.Name)
		}
	}
	return serving
}

func etcdContainerReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == etcdpod.ContainerEtcd {
			return c.Ready
		}
	}
	return false
}
