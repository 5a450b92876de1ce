package compaction

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func disrupted(reason string) corev1.Pod {
	return corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason}}}}
}

func terminated() corev1.Pod {
	return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}}}
}

// The condition's reasons (DeadlineExceeded, else the failed pod's own reason) and the failureReason label
// values grouped from them are upstream druid's.
func TestReasonsOfAFailedJob(t *testing.T) {
	backoff := &batchv1.JobCondition{Reason: batchv1.JobReasonBackoffLimitExceeded}
	for _, tc := range []struct {
		name             string
		cond             *batchv1.JobCondition
		pods             []corev1.Pod
		condition, label string
	}{
		{"deadline", &batchv1.JobCondition{Reason: batchv1.JobReasonDeadlineExceeded}, []corev1.Pod{terminated()}, "DeadlineExceeded", "deadlineExceeded"},
		{"preempted", backoff, []corev1.Pod{disrupted("PreemptionByScheduler")}, "PreemptionByScheduler", "preempted"},
		{"evicted by the eviction API", backoff, []corev1.Pod{disrupted("EvictionByEvictionAPI")}, "EvictionByEvictionAPI", "evicted"},
		{"deleted by the taint manager", backoff, []corev1.Pod{disrupted("DeletionByTaintManager")}, "DeletionByTaintManager", "evicted"},
		{"terminated by the kubelet", backoff, []corev1.Pod{disrupted("TerminationByKubelet")}, "TerminationByKubelet", "evicted"},
		{"another disruption", backoff, []corev1.Pod{disrupted("SomethingNew")}, "SomethingNew", "unknown"},
		{"the process failed", backoff, []corev1.Pod{terminated()}, "ProcessFailure", "processFailure"},
		{"pod without status", backoff, []corev1.Pod{{}}, "Unknown", "unknown"},
		{"no pod", backoff, nil, "Unknown", "unknown"},
		{"other job reason", &batchv1.JobCondition{Reason: "PodFailurePolicy"}, []corev1.Pod{terminated()}, "Unknown", "unknown"},
		{"no job reason", &batchv1.JobCondition{}, nil, "Unknown", "unknown"},
	} {
		if got := conditionReason(tc.cond, tc.pods); got != tc.condition {
			t.Errorf("%s: conditionReason = %q, want %q", tc.name, got, tc.condition)
		}
		if got := failureReason(tc.cond, tc.pods); got != tc.label {
			t.Errorf("%s: failureReason = %q, want %q", tc.name, got, tc.label)
		}
	}
}

// With a back-off limit the Job ran several pods; the one created last failed the Job.
func TestFailureReasonTakesTheNewestPod(t *testing.T) {
	first, last := terminated(), disrupted("EvictionByEvictionAPI")
	now := time.Now()
	first.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	last.CreationTimestamp = metav1.NewTime(now)
	backoff := &batchv1.JobCondition{Reason: batchv1.JobReasonBackoffLimitExceeded}
	for _, pods := range [][]corev1.Pod{{first, last}, {last, first}} {
		if got := failureReason(backoff, pods); got != "evicted" {
			t.Errorf("failureReason = %q, want evicted", got)
		}
	}
}
