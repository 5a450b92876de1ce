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

// The failureReason values and the pod states they come from are the deployed druid's.
func TestFailureReasonOfAFailedJob(t *testing.T) {
	backoff := &batchv1.JobCondition{Reason: batchv1.JobReasonBackoffLimitExceeded}
	for _, tc := range []struct {
		name string
		cond *batchv1.JobCondition
		pods []corev1.Pod
		want string
	}{
		{"deadline", &batchv1.JobCondition{Reason: batchv1.JobReasonDeadlineExceeded}, []corev1.Pod{terminated()}, "deadlineExceeded"},
		{"preempted", backoff, []corev1.Pod{disrupted("PreemptionByScheduler")}, "preempted"},
		{"evicted by the eviction API", backoff, []corev1.Pod{disrupted("EvictionByEvictionAPI")}, "evicted"},
		{"deleted by the taint manager", backoff, []corev1.Pod{disrupted("DeletionByTaintManager")}, "evicted"},
		{"terminated by the kubelet", backoff, []corev1.Pod{disrupted("TerminationByKubelet")}, "evicted"},
		{"another disruption", backoff, []corev1.Pod{disrupted("SomethingNew")}, "unknown"},
		{"the process failed", backoff, []corev1.Pod{terminated()}, "processFailure"},
		{"pod without status", backoff, []corev1.Pod{{}}, "unknown"},
		{"no pod", backoff, nil, "unknown"},
		{"other job reason", &batchv1.JobCondition{Reason: "PodFailurePolicy"}, []corev1.Pod{terminated()}, "unknown"},
		{"no job reason", &batchv1.JobCondition{}, nil, "unknown"},
	} {
		if got := failureReason(tc.cond, tc.pods); got != tc.want {
			t.Errorf("%s: failureReason = %q, want %q", tc.name, got, tc.want)
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

// The condition's reason is the deployed druid's: DeadlineExceeded, else the failed pod's own reason.
func TestConditionReasonOfAFailedJob(t *testing.T) {
	backoff := &batchv1.JobCondition{Reason: batchv1.JobReasonBackoffLimitExceeded}
	for _, tc := range []struct {
		name string
		cond *batchv1.JobCondition
		pods []corev1.Pod
		want string
	}{
		{"deadline", &batchv1.JobCondition{Reason: batchv1.JobReasonDeadlineExceeded}, []corev1.Pod{terminated()}, "DeadlineExceeded"},
		{"preempted", backoff, []corev1.Pod{disrupted("PreemptionByScheduler")}, "PreemptionByScheduler"},
		{"evicted by the eviction API", backoff, []corev1.Pod{disrupted("EvictionByEvictionAPI")}, "EvictionByEvictionAPI"},
		{"deleted by the taint manager", backoff, []corev1.Pod{disrupted("DeletionByTaintManager")}, "DeletionByTaintManager"},
		{"terminated by the kubelet", backoff, []corev1.Pod{disrupted("TerminationByKubelet")}, "TerminationByKubelet"},
		{"another disruption", backoff, []corev1.Pod{disrupted("SomethingNew")}, "SomethingNew"},
		{"the process failed", backoff, []corev1.Pod{terminated()}, "ProcessFailure"},
		{"pod without status", backoff, []corev1.Pod{{}}, "Unknown"},
		{"no pod", backoff, nil, "Unknown"},
		{"other job reason", &batchv1.JobCondition{Reason: "PodFailurePolicy"}, []corev1.Pod{terminated()}, "Unknown"},
		{"no job reason", &batchv1.JobCondition{}, nil, "Unknown"},
	} {
		if got := conditionReason(tc.cond, tc.pods); got != tc.want {
			t.Errorf("%s: conditionReason = %q, want %q", tc.name, got, tc.want)
		}
	}
}
