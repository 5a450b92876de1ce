package envtest

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobOutcome is how FinishJob ends a Job.
type JobOutcome struct {
	Succeeded bool
	// Failed is the failed-pod count of a failed Job.
	Failed int32
	// Reason and Message go into both conditions.
	Reason, Message string
}

// FinishJob gives the stored Job the terminal status the Job controller would (envtest runs none): start
// and completion times, pod counts, and the interim condition the apiserver requires before the final
// one. It tries once; callers retry conflicts with their own Eventually.
func (e *Env) FinishJob(ctx context.Context, job *batchv1.Job, out JobOutcome) error {
	current := &batchv1.Job{}
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(job), current); err != nil {
		return err
	}
	now := metav1.Now()
	current.Status.StartTime = &metav1.Time{Time: now.Add(-time.Minute)}
	interim, final := batchv1.JobFailureTarget, batchv1.JobFailed
	if out.Succeeded {
		interim, final = batchv1.JobSuccessCriteriaMet, batchv1.JobComplete
		current.Status.CompletionTime = &now
		current.Status.Succeeded = 1
	} else {
		current.Status.Failed = out.Failed
	}
	current.Status.Conditions = []batchv1.JobCondition{
		{Type: interim, Status: corev1.ConditionTrue, Reason: out.Reason, Message: out.Message, LastTransitionTime: now, LastProbeTime: now},
		{Type: final, Status: corev1.ConditionTrue, Reason: out.Reason, Message: out.Message, LastTransitionTime: now, LastProbeTime: now},
	}
	return e.Client.Status().Update(ctx, current)
}
