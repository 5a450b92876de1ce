package heal

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// Step 3 of the quorum-loss recovery, SavingSurvivingData: before step 4 deletes the member volumes, every
// volume is read (a data-revision Job each) and the most advanced one, when it is ahead of the backup, is
// uploaded as the newest full snapshot (a preserve-data Job), so the members that bootstrap from the
// backup in step 6 start from everything a surviving volume held. What is decided is in
// decide.PlanSurvivingData; the Jobs are in survivingdatajob.go. A volume that cannot be read or holds
// data that is not valid, or a failed upload, stops the recovery here with
// QuorumLossRecovery=False/ManualInterventionRequired and a Warning event: nothing is deleted, and
// deleting the failed Job (after repairing what it reported) runs it again.
//
// Every read goes to the apiserver (the Jobs are not in druid's cache, and the Job pods' status must be
// the current one).

// saveSurvivingData is step 3; it is done once what the volumes hold is in the store (or nothing needed
// saving), and then returns the record of the claims it read (decide.ReadVolumes) for step 4. Its Jobs
// stay until step 4 deletes them: deleting them here, before the phase moved on, would make a repeated
// step 3 start them again.
func (h *healRun) saveSurvivingData(ctx context.Context, sts *appsv1.StatefulSet) (string, bool, error) {
	etcd := druidv1alpha1.Defaulted(h.etcd)
	claims, err := h.memberClaims(ctx, sts)
	if err != nil {
		return "", false, err
	}
	done, err := h.saveWhatVolumesHold(ctx, etcd, sts, claims)
	if err != nil || !done {
		return "", false, err
	}
	return decide.ReadVolumes(claims), true, nil
}

// saveWhatVolumesHold reads the claims and saves the most advanced one when it is ahead of the backup.
func (h *healRun) saveWhatVolumesHold(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, claims []*corev1.PersistentVolumeClaim) (bool, error) {
	in, err := h.survivingDataJobInput(ctx, etcd)
	if err != nil {
		return false, err
	}
	readings, err := h.readMemberVolumes(ctx, etcd, sts, claims, in)
	if err != nil {
		return false, err
	}
	backup := decide.BackupRevision(h.input.Observed.SnapshotLeases)
	plan := decide.PlanSurvivingData(readings, backup)
	if len(plan.Blocked) > 0 {
		h.holdRecovery(ctx, fmt.Sprintf("cannot tell what every member volume holds, so none is deleted: %s. Repair the volume (or delete the claim "+
			"once it holds nothing that is needed), then delete the failed Job to read it again", strings.Join(plan.Blocked, "; ")))
		return false, nil
	}
	if len(plan.Pending) > 0 {
		log.FromContext(ctx).V(1).Info("Waiting for the member volumes to be read", "pvcs", plan.Pending)
		h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
			recoveryProgress(decide.StepSaveSurvivingData, fmt.Sprintf("reading what the member data volumes hold before any is deleted, waiting for %d: %s",
				len(plan.Pending), strings.Join(plan.Pending, ", "))))
		h.requeue(RecoveryPollPeriod, "waiting for the member volumes to be read")
		return false, nil
	}

	saved := "no member volume holds etcd data; nothing to save"
	switch t := plan.Target; {
	case t != nil && !plan.Preserve:
		saved = fmt.Sprintf("the most advanced volume %s holds revision %d, the backup already holds %d; nothing to upload", t.Claim, t.Revision, backup)
	case t != nil:
		var done bool
		if saved, done, err = h.preserveMostAdvanced(ctx, etcd, claims, *t, backup, in); err != nil || !done {
			return false, err
		}
	}
	log.FromContext(ctx).Info(decide.StepLabel(decide.StepSaveSurvivingData)+": what the member volumes hold is in the backup",
		"result", saved, "readings", readingSummary(readings))
	h.deps.Recorder.Eventf(h.etcd, nil, "Normal", EventReasonQuorumLossRecovery, "SaveSurvivingData", "%s: %s",
		decide.StepLabel(decide.StepSaveSurvivingData), saved)
	return true, nil
}

// readMemberVolumes runs (or looks at) the data-revision Job of every claim and returns what each
// reported; a failed reading names its Job, which an operator deletes to read the volume again.
func (h *healRun) readMemberVolumes(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, claims []*corev1.PersistentVolumeClaim,
	in survivingDataJobInput) ([]decide.VolumeReading, error) {
	readings := make([]decide.VolumeReading, 0, len(claims))
	for _, c := range claims {
		ordinal, _ := memberVolumeOrdinal(sts, c.Name)
		job := newRevisionJob(etcd, c, ordinal, in)
		res, err := h.runSurvivingDataJob(ctx, job)
		if err != nil {
			return nil, err
		}
		reading := parseDataRevision(c.Name, res)
		if reading.State == decide.ReadingFailed {
			reading.Problem = fmt.Sprintf("Job %s: %s", job.Name, reading.Problem)
		}
		readings = append(readings, reading)
	}
	return readings, nil
}

// preserveMostAdvanced runs (or looks at) the preserve-data Job of the target volume; done once its
// result names the target's revision. A failure holds the recovery (holdRecovery) and is not done.
func (h *healRun) preserveMostAdvanced(ctx context.Context, etcd *druidv1alpha1.Etcd, claims []*corev1.PersistentVolumeClaim, t decide.VolumeReading,
	backup int64, in survivingDataJobInput) (string, bool, error) {
	var claim *corev1.PersistentVolumeClaim
	for _, c := range claims {
		if c.Name == t.Claim {
			claim = c
		}
	}
	job := newPreserveJob(etcd, claim, t.Revision, in)
	res, err := h.runSurvivingDataJob(ctx, job)
	if err != nil {
		return "", false, err
	}
	what := fmt.Sprintf("volume %s at revision %d (the backup holds %d)", t.Claim, t.Revision, backup)
	switch {
	case !res.done:
		log.FromContext(ctx).V(1).Info("Waiting for the most advanced volume to be uploaded", "pvc", t.Claim, "revision", t.Revision, "job", job.Name)
		h.recordRecovery(druidv1alpha1.LastOperationStateProcessing, druidv1alpha1.ConditionTrue, ReasonRecoveryInProgress,
			recoveryProgress(decide.StepSaveSurvivingData, fmt.Sprintf("uploading the most advanced %s as the newest full snapshot (Job %s)", what, job.Name)))
		h.requeue(RecoveryPollPeriod, "waiting for the most advanced volume to be uploaded")
		return "", false, nil
	case res.failed:
		h.holdRecovery(ctx, fmt.Sprintf("uploading the most advanced %s failed, so no volume is deleted: Job %s: %s. Repair the store, then delete the Job to upload again",
			what, job.Name, res.message))
		return "", false, nil
	}
	p, err := parsePreserved(res.message, t.Revision)
	if err != nil {
		h.holdRecovery(ctx, fmt.Sprintf("uploading the most advanced %s: Job %s: %v; no volume is deleted", what, job.Name, err))
		return "", false, nil
	}
	verb := "uploaded it as the newest full snapshot"
	if !p.Uploaded {
		verb = "the store already held it"
	}
	return fmt.Sprintf("saved the most advanced %s: %s, %s", what, p.Snapshot, verb), true, nil
}

// runSurvivingDataJob creates the Job when it does not exist and returns its result. A Job for another
// claim (a claim recreated since) or another revision is deleted first, so every result read belongs to
// the claim and revision asked for.
func (h *healRun) runSurvivingDataJob(ctx context.Context, want *batchv1.Job) (jobResult, error) {
	job := &batchv1.Job{}
	err := h.deps.Reader.Get(ctx, client.ObjectKeyFromObject(want), job)
	if apierrors.IsNotFound(err) {
		if err := h.deps.Client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return jobResult{}, nil
		} else if err != nil {
			return jobResult{}, fmt.Errorf("creating job %s: %w", want.Name, err)
		}
		log.FromContext(ctx).Info("Started a job on a member data volume", "step", decide.StepLabel(decide.StepSaveSurvivingData), "job", want.Name,
			"pvc", want.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
		h.deps.Recorder.Eventf(h.etcd, nil, "Normal", EventReasonQuorumLossRecovery, "ReadSurvivingData", "%s: started job %s (%s) on data volume %s",
			decide.StepLabel(decide.StepSaveSurvivingData), want.Name, want.Spec.Template.Spec.Containers[0].Args[0],
			want.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
		return jobResult{}, nil
	}
	if err != nil {
		return jobResult{}, fmt.Errorf("reading job %s: %w", want.Name, err)
	}
	if job.DeletionTimestamp != nil {
		return jobResult{}, nil
	}
	for _, key := range []string{AnnotationDataVolumeUID, AnnotationExpectRevision} {
		if job.Annotations[key] != want.Annotations[key] {
			log.FromContext(ctx).Info("Replacing a job made for another volume or revision", "job", job.Name, key, job.Annotations[key])
			return jobResult{}, h.deleteJob(ctx, job)
		}
	}
	pods := &corev1.PodList{}
	if err := h.deps.Reader.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return jobResult{}, fmt.Errorf("listing the pods of job %s: %w", job.Name, err)
	}
	return resultOf(job, pods.Items), nil
}

// deleteSurvivingDataJobs deletes the Etcd's surviving-data Jobs (their pods go with them) and tells
// whether none is left. Step 3 begins with none, so that no result of an earlier recovery is ever read
// again, and step 4 deletes them before the volumes they mount.
func (h *healRun) deleteSurvivingDataJobs(ctx context.Context) (bool, error) {
	jobs := &batchv1.JobList{}
	if err := h.deps.Reader.List(ctx, jobs, client.InNamespace(h.etcd.Namespace), client.MatchingLabels{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: h.etcd.Name,
		druidv1alpha1.LabelComponentKey: ComponentSurvivingDataJob,
	}); err != nil {
		return false, fmt.Errorf("listing the surviving-data jobs: %w", err)
	}
	for i := range jobs.Items {
		if jobs.Items[i].DeletionTimestamp == nil {
			if err := h.deleteJob(ctx, &jobs.Items[i]); err != nil {
				return false, err
			}
		}
	}
	if len(jobs.Items) > 0 {
		h.requeue(RecoveryPollPeriod, "waiting for the surviving-data jobs to be deleted")
	}
	return len(jobs.Items) == 0, nil
}

func (h *healRun) deleteJob(ctx context.Context, job *batchv1.Job) error {
	err := h.deps.Client.Delete(ctx, job, client.Preconditions{UID: ptr.To(job.UID)}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting job %s: %w", job.Name, err)
	}
	return nil
}

// memberClaims are the member data volume claims, read from the apiserver, by name. A claim already being
// deleted is left out: no pod may mount it any more, and its deletion cannot be undone.
func (h *healRun) memberClaims(ctx context.Context, sts *appsv1.StatefulSet) ([]*corev1.PersistentVolumeClaim, error) {
	list := &corev1.PersistentVolumeClaimList{}
	if err := h.deps.Reader.List(ctx, list, client.InNamespace(sts.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the member data volumes: %w", err)
	}
	var claims []*corev1.PersistentVolumeClaim
	for i := range list.Items {
		c := &list.Items[i]
		if !isMemberVolume(sts, c.Name) {
			continue
		}
		if c.DeletionTimestamp != nil {
			log.FromContext(ctx).Info("A member data volume is already being deleted; it cannot be read", "pvc", c.Name)
			continue
		}
		claims = append(claims, c)
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	return claims, nil
}

// survivingDataJobInput is the image and, for a Local store, its checked node directory.
func (h *healRun) survivingDataJobInput(ctx context.Context, etcd *druidv1alpha1.Etcd) (survivingDataJobInput, error) {
	local, err := storeaccess.ResolveLocalStore(ctx, h.deps.Reader, etcd.Spec.Backup.Store, storeaccess.EtcdContainerField, etcd.Namespace,
		volumeSurvivingLocal, h.deps.Config.LocalBackup)
	if err != nil {
		return survivingDataJobInput{}, err
	}
	return survivingDataJobInput{image: survivingDataImage(etcd, h.deps.Config.Images.BackupRestore), local: local}, nil
}

// holdRecovery stops the recovery at step 3 for a human: QuorumLossRecovery False with reason
// ManualInterventionRequired and lastOperation Error, both saying why; a Warning event when the
// condition turns so. The phase stays SavingSurvivingData, so every later heal flow looks again.
func (h *healRun) holdRecovery(ctx context.Context, message string) {
	h.outcome.recoveryHeldBack = ReasonManualInterventionRequired
	description := recoveryProgress(decide.StepSaveSurvivingData, message)
	c := druidv1alpha1.FindCondition(h.outcome.Observed.Etcd.Status.Conditions, ConditionTypeQuorumLossRecovery)
	if c != nil && c.Status == druidv1alpha1.ConditionFalse && c.Reason == ReasonManualInterventionRequired && c.Message == description {
		return
	}
	if c == nil || c.Reason != ReasonManualInterventionRequired {
		log.FromContext(ctx).Info("Quorum-loss recovery stopped before deleting any volume", "step", decide.StepLabel(decide.StepSaveSurvivingData), "why", message)
		h.deps.Recorder.Eventf(h.etcd, nil, "Warning", EventReasonManualInterventionRequired, "SaveSurvivingData", "%s", description)
	}
	h.recordRecovery(druidv1alpha1.LastOperationStateError, druidv1alpha1.ConditionFalse, ReasonManualInterventionRequired, description)
}

// readingSummary is "<claim>=<revision>|empty|invalid" per volume, for the log.
func readingSummary(readings []decide.VolumeReading) string {
	parts := make([]string, 0, len(readings))
	for _, r := range readings {
		switch {
		case r.Valid:
			parts = append(parts, fmt.Sprintf("%s=%d", r.Claim, r.Revision))
		case r.Empty:
			parts = append(parts, r.Claim+"=empty")
		default:
			parts = append(parts, r.Claim+"=invalid")
		}
	}
	return strings.Join(parts, ", ")
}
