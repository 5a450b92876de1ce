package compaction

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Values of the failureReason label of etcddruid_compaction_jobs_total and _job_duration_seconds, the
// upstream druid's, so that Gardener's compaction dashboards and queries split failures the same way.
const (
	failureReasonNone             = "none" // a succeeded Job
	failureReasonDeadlineExceeded = "deadlineExceeded"
	failureReasonPreempted        = "preempted"
	failureReasonEvicted          = "evicted"
	failureReasonProcessFailure   = "processFailure"
	failureReasonUnknown          = "unknown"
)

// Reasons of a False LastSnapshotCompactionSucceeded besides DeadlineExceeded and the DisruptionTarget
// reasons: upstream druid's, so that either druid reads the other's condition.
const (
	conditionReasonProcessFailure = "ProcessFailure"
	conditionReasonUnknown        = "Unknown"
)

// conditionReason is the reason a failed Job leaves in LastSnapshotCompactionSucceeded: DeadlineExceeded
// (which makes the next trigger a full snapshot in both druids), else, after the retries ran out, why the
// pod that failed last failed; Unknown otherwise.
func conditionReason(cond *batchv1.JobCondition, pods []corev1.Pod) string {
	switch cond.Reason {
	case batchv1.JobReasonDeadlineExceeded:
		return batchv1.JobReasonDeadlineExceeded
	case batchv1.JobReasonBackoffLimitExceeded:
		if pod := newestPod(pods); pod != nil {
			return podFailureReason(pod)
		}
	}
	return conditionReasonUnknown
}

// failureReason is the failureReason label value of a failed Job (the condition's reason, grouped).
func failureReason(cond *batchv1.JobCondition, pods []corev1.Pod) string {
	switch reason := conditionReason(cond, pods); reason {
	case batchv1.JobReasonDeadlineExceeded:
		return failureReasonDeadlineExceeded
	case corev1.PodReasonPreemptionByScheduler:
		return failureReasonPreempted
	case "DeletionByTaintManager", "EvictionByEvictionAPI", corev1.PodReasonTerminationByKubelet:
		return failureReasonEvicted
	case conditionReasonProcessFailure:
		return failureReasonProcessFailure
	default:
		return failureReasonUnknown
	}
}

// podFailureReason is why pod failed: the reason of its DisruptionTarget condition (kubelet, eviction API,
// taint manager, preemption), else ProcessFailure when its container terminated by itself.
func podFailureReason(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			if c.Reason == "" {
				return conditionReasonUnknown
			}
			return c.Reason
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return conditionReasonProcessFailure
		}
	}
	return conditionReasonUnknown
}

// newestPod is the pod the Job created last: with a back-off limit, the one whose failure failed the Job.
func newestPod(pods []corev1.Pod) *corev1.Pod {
	var newest *corev1.Pod
	for i := range pods {
		if newest == nil || newest.CreationTimestamp.Before(&pods[i].CreationTimestamp) {
			newest = &pods[i]
		}
	}
	return newest
}

// jobPods lists the pods of job (by its controller-uid label, so that pods of an earlier Job of the same
// name do not count). They carry druid's managed-by label, so the manager's cache holds them.
func (r *Reconciler) jobPods(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing the pods of compaction job %s: %w", job.Name, err)
	}
	return pods.Items, nil
}
