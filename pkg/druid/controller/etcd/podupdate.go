package etcd

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/podupdate"
)

// podUpdatePollPeriod is how soon the pod update looks again while a member is being replaced; pod and
// StatefulSet events usually bring the Etcd back sooner.
const podUpdatePollPeriod = 5 * time.Second

// podUpdateStep is the pod update flow: under updateStrategy OnDelete the StatefulSet controller recreates
// a deleted member pod with the current template but deletes none itself; this step deletes the next
// out-of-date member pod in the order package podupdate decides (members that do not serve first, the
// leader last, never below the quorum). It runs in every reconcile after the heal flow, on the status
// flow's observation, so an update goes on without a spec reconcile.
func (r *Reconciler) podUpdateStep(etcd *druidv1alpha1.Etcd, status *statusRun) flow.Step {
	return flow.Step{Name: "updateMemberPods", Run: func(ctx context.Context) flow.Result {
		return r.updateMemberPods(ctx, etcd, status)
	}}
}

// updateMemberPods decides on the cache whether a pod is out of date at all (most reconciles end there),
// then decides again on the StatefulSet and pods read from the apiserver: the cache may still show an older
// update revision, which would make updated pods look out of date, or a pod Ready that druid deleted a
// moment ago. The deletion carries the pod's UID and resourceVersion as preconditions, so a pod that
// changed since (it turned unready, or is a new pod) is not deleted on a stale judgement.
func (r *Reconciler) updateMemberPods(ctx context.Context, etcd *druidv1alpha1.Etcd, status *statusRun) flow.Result {
	if !podUpdateDue(status.observed.StatefulSet, status.observed.Pods) {
		return flow.Continue()
	}
	logger := log.FromContext(ctx)
	sts := &appsv1.StatefulSet{}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(status.observed.StatefulSet), sts); err != nil {
		if apierrors.IsNotFound(err) {
			return flow.Continue() // deleted meanwhile (the deletion flow, the adoption's recreation)
		}
		return flow.Fail(fmt.Errorf("reading statefulset: %w", err))
	}
	if why := podUpdateIdle(sts); why != "" {
		logger.V(1).Info("No member pod update", "why", why)
		return flow.Continue()
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(druidv1alpha1.ManagedLabels(etcd))); err != nil {
		return flow.Fail(fmt.Errorf("listing member pods: %w", err))
	}
	members, _ := health.MemberPods(pods.Items, etcd, sts)
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	in := podupdate.Input{
		UpdateRevision: sts.Status.UpdateRevision,
		Replicas:       replicas,
		ClusterSize:    votersBeyondOwn(etcd) + max(status.observed.ClusterSize, replicas),
		BackupNotReady: backupNotReady(status.computed),
		Members:        podupdate.Members(etcd, replicas, members, status.observed.MemberLeases),
	}
	d := podupdate.Plan(in)
	switch d.Verdict {
	case podupdate.Done:
		return flow.Continue()
	case podupdate.Wait:
		logger.V(1).Info("Member pod update waits", "reason", d.Reason, "updateRevision", in.UpdateRevision)
		return flow.RequeueAfter(podUpdatePollPeriod, "member pod update: "+d.Reason)
	case podupdate.Hold:
		logger.Info("Member pod update held", "reason", d.Reason, "updateRevision", in.UpdateRevision)
		r.recorder.Eventf(etcd, relatedPod(members, d.Member), corev1.EventTypeNormal, EventReasonMemberPodUpdateHeld, actionUpdatePod,
			"update to revision %s held: %s", in.UpdateRevision, d.Reason)
		return flow.RequeueAfter(r.config.StatusSyncPeriod, "member pod update held: "+d.Reason)
	}
	return r.deleteForUpdate(ctx, etcd, members[d.Member.Pod], d, in.UpdateRevision)
}

// deleteForUpdate deletes pod, which Plan chose, and records why.
func (r *Reconciler) deleteForUpdate(ctx context.Context, etcd *druidv1alpha1.Etcd, pod *corev1.Pod, d podupdate.Decision, updateRevision string) flow.Result {
	err := r.client.Delete(ctx, pod, client.Preconditions{UID: ptr.To(pod.UID), ResourceVersion: ptr.To(pod.ResourceVersion)})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone already, or changed since it was read: decide again on the newer state.
		return flow.RequeueAfter(conflictRetryDelay, "member pod changed while its update was decided")
	}
	if err != nil {
		return flow.Fail(fmt.Errorf("deleting pod %s to update it: %w", pod.Name, err))
	}
	log.FromContext(ctx).Info("Deleted a member pod to update it", "pod", pod.Name, "fromRevision", d.Member.Revision,
		"updateRevision", updateRevision, "reason", d.Reason)
	r.recorder.Eventf(etcd, pod, corev1.EventTypeNormal, EventReasonMemberPodUpdated, actionUpdatePod,
		"deleted pod %s (revision %s) for the StatefulSet to recreate it with revision %s: %s", pod.Name, d.Member.Revision, updateRevision, d.Reason)
	return flow.RequeueAfter(podUpdatePollPeriod, "member pod update in progress")
}

// podUpdateDue tells from the cache whether a member pod may be out of date: the StatefulSet updates
// OnDelete, has an update revision, and a pod carries another one.
func podUpdateDue(sts *appsv1.StatefulSet, pods map[string]*corev1.Pod) bool {
	if sts == nil || sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType || sts.Status.UpdateRevision == "" {
		return false
	}
	for _, pod := range pods {
		if rev := pod.Labels[appsv1.ControllerRevisionHashLabelKey]; rev != "" && rev != sts.Status.UpdateRevision {
			return true
		}
	}
	return false
}

// podUpdateIdle says why no member pod is updated now ("" when the update may go on): the StatefulSet
// controller updates the pods itself (another strategy: an upstream druid wrote it), the StatefulSet is
// going away (deletion, the adoption's recreation), runs no pods (hibernation, a quorum-loss recovery,
// which also scales it), or its controller has not yet observed the current spec, so that the update
// revision may belong to an older template.
func podUpdateIdle(sts *appsv1.StatefulSet) string {
	switch {
	case sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType:
		return fmt.Sprintf("updateStrategy %s: the StatefulSet controller updates the pods", sts.Spec.UpdateStrategy.Type)
	case sts.DeletionTimestamp != nil:
		return "the StatefulSet is being deleted"
	case heal.QuorumLossRecoveryInProgress(sts):
		return "a quorum-loss recovery is in progress"
	case ptr.Deref(sts.Spec.Replicas, 1) == 0:
		return "no replicas"
	case sts.Status.ObservedGeneration < sts.Generation:
		return "the StatefulSet controller has not observed the current generation"
	case sts.Status.UpdateRevision == "":
		return "no update revision"
	}
	return ""
}

// backupNotReady is BackupReady's reason and message when it is False, "" otherwise (also when the
// cluster has no backup store).
func backupNotReady(status druidv1alpha1.EtcdStatus) string {
	c := druidv1alpha1.FindCondition(status.Conditions, druidv1alpha1.ConditionTypeBackupReady)
	if c == nil || c.Status != druidv1alpha1.ConditionFalse || c.Reason == druidv1alpha1.ReasonNotChecked {
		return ""
	}
	return c.Reason + ": " + c.Message
}

// relatedPod is the pod a decision is about, as the event's related object (nil without one).
func relatedPod(pods map[string]*corev1.Pod, m *podupdate.Member) runtime.Object {
	if m == nil || pods[m.Pod] == nil {
		return nil
	}
	return pods[m.Pod]
}

// votersBeyondOwn is the number of the source cluster's members an Etcd that joined an existing cluster
// (spec.etcd.bootstrapWithExistingCluster) votes with besides its own: the quorum is counted over all of
// them, and the source members never count as serving here, so serving members are held rather than
// replaced on a guess about the source's health.
func votersBeyondOwn(etcd *druidv1alpha1.Etcd) int32 {
	if b := etcd.Spec.Etcd.BootstrapWithExistingCluster; b != nil {
		return int32(len(b.Members)) //nolint:gosec // at most 10, validated
	}
	return 0
}
