package compaction

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Values of the failureReason label of etcddruid_compaction_jobs_total and _job_duration_seconds, the
// deployed druid's, so that Gardener's compaction dashboards and queries split failures the same way.
const (
	failureReasonNone             = "none" // a succeeded Job
	failureReasonDeadlineExceeded = "deadlineExceeded"
	failureReasonPreempted        = "preempted"
	failureReasonEvicted          = "evicted"
	failureReasonProcessFailure   = "processFailure"
	failureReasonUnknown          = "unknown"
)

// failureReason classifies a failed Job by its failure condition and, when it ran out of retries, by the
// pod that failed last: preempted or evicted (the pod's DisruptionTarget condition), or processFailure
// (a container terminated by itself). Anything else is unknown.
func failureReason(cond *batchv1.JobCondition, pods []corev1.Pod) string {
	switch cond.Reason {
	case batchv1.JobReasonDeadlineExceeded:
		return failureReasonDeadlineExceeded
	case batchv1.JobReasonBackoffLimitExceeded:
		if pod := newestPod(pods); pod != nil {
			return podFailureReason(pod)
		}
	}
	return failureReasonUnknown
}

// podFailureReason is why pod failed: a disruption (kubelet, eviction API, taint manager, preemption)
// recorded in DisruptionTarget, else its container's own termination.
func podFailureReason(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case corev1.PodReasonPreemptionByScheduler:
			return failureReasonPreempted
		case "DeletionByTaintManager", "EvictionByEvictionAPI", corev1.PodReasonTerminationByKubelet:
			return failureReasonEvicted
		}
		return failureReasonUnknown
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return failureReasonProcessFailure
		}
	}
	return failureReasonUnknown
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
