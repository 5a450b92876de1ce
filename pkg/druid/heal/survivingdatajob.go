package heal

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// The Jobs of step 3 of the quorum-loss recovery (SavingSurvivingData): `etcdbrctl data-revision` on every
// member volume, then `etcdbrctl preserve-data` on the most advanced one. Both only read the volume
// (mounted read-only; the throwaway etcd runs on a copy in an emptyDir) and report one JSON line in their
// termination message, which druid reads from the Job pod's status — no log access, no API access from
// the pod. The Jobs are named after the Etcd (and the ordinal), so that a restarted druid finds them
// instead of starting new ones; each records the UID of the claim it reads (and preserve-data the
// revision it must upload), and a Job for another claim or revision is replaced.
const (
	// ComponentSurvivingDataJob is the app.kubernetes.io/component label value of the Jobs and their pods.
	ComponentSurvivingDataJob = "etcd-surviving-data"
	containerSurvivingData    = "surviving-data"

	// AnnotationDataVolumeUID is the UID of the claim a surviving-data Job reads.
	AnnotationDataVolumeUID = "druid.gardener.cloud/data-volume-uid"
	// AnnotationExpectRevision is the revision a preserve-data Job uploads.
	AnnotationExpectRevision = "druid.gardener.cloud/expect-revision"

	// survivingScratchMountPath holds the copy of the data the throwaway etcd runs on: an emptyDir, as
	// large as the node's ephemeral storage allows (the copy needs the database's size).
	survivingScratchMountPath = "/var/etcd/scratch"
	// survivingDataJobDeadline bounds a Job, e.g. one whose pod cannot be scheduled because the volume's
	// node is gone: it then fails, and the recovery asks for a human instead of waiting for ever.
	survivingDataJobDeadline = 30 * time.Minute
	// survivingDataBackoffLimit retries a failed pod once (a transient store error); both commands are
	// idempotent.
	survivingDataBackoffLimit = int32(1)

	volumeSurvivingData    = "data"
	volumeSurvivingScratch = "scratch"
	volumeSurvivingTmp     = "tmp"
	volumeSurvivingSecret  = "etcd-backup"
	volumeSurvivingLocal   = "local-backup"
)

// RevisionJobName is the data-revision Job of the member volume with the ordinal.
func RevisionJobName(etcd *druidv1alpha1.Etcd, ordinal int) string {
	return fmt.Sprintf("%s-data-revision-%d", etcd.Name, ordinal)
}

// PreserveJobName is the preserve-data Job of the recovery.
func PreserveJobName(etcd *druidv1alpha1.Etcd) string { return etcd.Name + "-preserve-data" }

// survivingDataJobInput is what the Jobs depend on besides the (defaulted) Etcd and the claim.
type survivingDataJobInput struct {
	image string
	// local is the Local store's checked volume and mount; nil for other providers.
	local *storeaccess.LocalMount
}

// DataRevisionArgs are the arguments of `etcdbrctl data-revision` in the Job of a member volume.
func DataRevisionArgs(etcd *druidv1alpha1.Etcd) []string {
	return append([]string{podwire.CommandDataRevision}, dataCopyArgs(etcd)...)
}

// PreserveDataArgs are the arguments of `etcdbrctl preserve-data` that uploads the volume at revision as
// the newest full snapshot, with the sidecar's store location and compression, so the snapshot lands
// where the restoring members look and reads as the sidecar's own.
func PreserveDataArgs(etcd *druidv1alpha1.Etcd, revision int64) []string {
	args := append([]string{podwire.CommandPreserveData}, dataCopyArgs(etcd)...)
	args = append(args, podwire.Arg(podwire.FlagExpectRevision, strconv.FormatInt(revision, 10)))
	args = append(args, storeaccess.StoreLocationArgs(etcd.Spec.Backup.Store, "")...)
	args = append(args, storeaccess.CompressionArgs(etcd.Spec.Backup)...)
	if t := etcd.Spec.Backup.EtcdSnapshotTimeout; t != nil {
		args = append(args, podwire.Arg(podwire.FlagEtcdSnapshotTimeout, t.Duration.String()))
	}
	return args
}

// newRevisionJob renders the data-revision Job of a member volume.
func newRevisionJob(etcd *druidv1alpha1.Etcd, claim *corev1.PersistentVolumeClaim, ordinal int, in survivingDataJobInput) *batchv1.Job {
	return survivingDataJob(etcd, RevisionJobName(etcd, ordinal), claim, DataRevisionArgs(etcd), false, in)
}

// newPreserveJob renders the preserve-data Job (PreserveDataArgs) with the sidecar's store credentials.
func newPreserveJob(etcd *druidv1alpha1.Etcd, claim *corev1.PersistentVolumeClaim, revision int64, in survivingDataJobInput) *batchv1.Job {
	job := survivingDataJob(etcd, PreserveJobName(etcd), claim, PreserveDataArgs(etcd, revision), true, in)
	job.Annotations[AnnotationExpectRevision] = fmt.Sprint(revision)
	return job
}

// dataCopyArgs locate the data and name its owner as the sidecar marks it (<namespace>/<etcd>): a volume
// of another Etcd bound to this claim (a retained or static volume) is then not valid and never uploaded
// as this Etcd's backup.
func dataCopyArgs(etcd *druidv1alpha1.Etcd) []string {
	return []string{
		podwire.Arg(podwire.FlagDataDir, etcdpod.DataDir),
		podwire.Arg(podwire.FlagScratchDir, survivingScratchMountPath),
		podwire.Arg(podwire.FlagTerminationMessagePath, corev1.TerminationMessagePathDefault),
		podwire.Arg(podwire.FlagOwner, etcd.Namespace+"/"+etcd.Name),
	}
}

// survivingDataJob renders a Job that runs etcdbrctl with args on the claim, mounted read-only at the
// etcd pods' data path. The Job carries the managed labels and the Etcd as controller owner; its pod
// lacks app.kubernetes.io/part-of, so that it never counts as a member pod (the recovery's step 2 waits
// for those to be gone). The pod runs as the etcd pods do (uid 65532, so it can read the member
// directory they wrote with mode 0700; as root only for an Etcd with spec.runAsRoot, whose data root
// owns), hardened: no service account token, no privilege escalation, no capabilities, a read-only root
// file system (writes only to the scratch and /tmp emptyDirs), the runtime's default seccomp profile.
// withStore adds the backup secret, the Local store's directory and the network policy labels.
func survivingDataJob(etcd *druidv1alpha1.Etcd, name string, claim *corev1.PersistentVolumeClaim, args []string, withStore bool,
	in survivingDataJobInput) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace,
		Annotations: map[string]string{AnnotationDataVolumeUID: string(claim.UID)}}}
	component.ApplyManagedMeta(job, etcd, ComponentSurvivingDataJob)
	var storeLabels map[string]string
	if withStore {
		storeLabels = storeaccess.StoreNetworkPolicyLabels()
	}
	podLabels := component.JobPodLabels(ComponentSurvivingDataJob, name, storeLabels)

	volumes := []corev1.Volume{
		{Name: volumeSurvivingData, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: claim.Name, ReadOnly: true}}},
		{Name: volumeSurvivingScratch, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: volumeSurvivingTmp, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: volumeSurvivingData, MountPath: etcdpod.DataVolumeMountPath, ReadOnly: true},
		{Name: volumeSurvivingScratch, MountPath: survivingScratchMountPath},
		{Name: volumeSurvivingTmp, MountPath: etcdpod.TmpMountPath},
	}
	var env []corev1.EnvVar
	if withStore {
		store := etcd.Spec.Backup.Store
		if store.SecretRef != nil && store.SecretRef.Name != "" {
			volumes = append(volumes, corev1.Volume{Name: volumeSurvivingSecret, VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: store.SecretRef.Name, DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode)}}})
			mountPath := storeaccess.SecretMountPath(store, false)
			mounts = append(mounts, corev1.VolumeMount{Name: volumeSurvivingSecret, MountPath: mountPath, ReadOnly: true})
			env = append(env, storeaccess.StoreCredentialsEnv(store, mountPath, "")...)
		}
		if in.local != nil {
			volumes, mounts = append(volumes, in.local.Volume), append(mounts, in.local.Mount)
			env = append(env, corev1.EnvVar{Name: etcdpod.EnvHome, Value: etcdpod.LocalHome})
		}
	}

	job.Spec = batchv1.JobSpec{
		BackoffLimit:          ptr.To(survivingDataBackoffLimit),
		ActiveDeadlineSeconds: ptr.To(int64(survivingDataJobDeadline / time.Second)),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				PriorityClassName:            ptr.Deref(etcd.Spec.PriorityClassName, ""),
				SecurityContext:              survivingDataPodSecurity(etcd),
				Containers: []corev1.Container{{
					Name:            containerSurvivingData,
					Image:           in.image,
					ImagePullPolicy: corev1.PullIfNotPresent,
					Args:            args,
					Env:             env,
					VolumeMounts:    mounts,
					// The result is the termination message; a failure leaves the log's tail there instead.
					TerminationMessagePath:   corev1.TerminationMessagePathDefault,
					TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						ReadOnlyRootFilesystem:   ptr.To(true),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
				Volumes: volumes,
			},
		},
	}
	return job
}

// survivingDataPodSecurity is the etcd pods' identity (see survivingDataJob) with the runtime's default
// seccomp profile.
func survivingDataPodSecurity(etcd *druidv1alpha1.Etcd) *corev1.PodSecurityContext {
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	if etcd.Spec.RunAsRoot != nil && *etcd.Spec.RunAsRoot {
		return &corev1.PodSecurityContext{SeccompProfile: seccomp}
	}
	uid := druidv1alpha1.DefaultRunAsUser
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid), FSGroup: ptr.To(uid),
		SeccompProfile: seccomp}
}

// survivingDataImage is the Etcd's pinned backup-restore image or the configured one.
func survivingDataImage(etcd *druidv1alpha1.Etcd, configured string) string {
	if etcd.Spec.Backup.Image != nil && *etcd.Spec.Backup.Image != "" {
		return *etcd.Spec.Backup.Image
	}
	return configured
}

// jobResult is where a surviving-data Job stands: still running, failed (with why), or succeeded with
// its container's termination message.
type jobResult struct {
	done    bool
	failed  bool
	message string
}

// resultOf reads the Job's terminal condition and the termination message of its pod's container (pods
// selected by the Job's controller-uid label). A Job that completed without a pod reporting a message
// (a runtime that does not report termination messages, or the pod is gone) counts as failed: its
// result is unknown.
func resultOf(job *batchv1.Job, pods []corev1.Pod) jobResult {
	var failedCond *batchv1.JobCondition
	complete := false
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			complete = true
		case batchv1.JobFailed:
			failedCond = c
		}
	}
	if !complete && failedCond == nil {
		return jobResult{}
	}
	message := terminationMessage(job, pods, complete)
	switch {
	case complete && message != "":
		return jobResult{done: true, message: message}
	case complete:
		return jobResult{done: true, failed: true, message: "completed, but its pod reported no termination message"}
	}
	why := strings.TrimSpace(failedCond.Reason + ": " + failedCond.Message)
	if message != "" {
		why += "; last output: " + message
	}
	return jobResult{done: true, failed: true, message: why}
}

// terminationMessage is the termination message of the Job's pod that succeeded (succeeded) or of the
// last pod that failed.
func terminationMessage(job *batchv1.Job, pods []corev1.Pod, succeeded bool) string {
	var found string
	var at time.Time
	for i := range pods {
		pod := &pods[i]
		if !ownedBy(pod, job) || (pod.Status.Phase == corev1.PodSucceeded) != succeeded {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			t := cs.State.Terminated
			if cs.Name != containerSurvivingData || t == nil || (t.ExitCode == 0) != succeeded {
				continue
			}
			if found == "" || t.FinishedAt.After(at) {
				found, at = strings.TrimSpace(t.Message), t.FinishedAt.Time
			}
		}
	}
	return found
}

func ownedBy(pod *corev1.Pod, job *batchv1.Job) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.UID == job.UID
}

// parseDataRevision turns the result of data-revision into the reading of the claim.
func parseDataRevision(claim string, r jobResult) decide.VolumeReading {
	reading := decide.VolumeReading{Claim: claim}
	switch {
	case !r.done:
		return reading
	case r.failed:
		reading.State, reading.Problem = decide.ReadingFailed, r.message
		return reading
	}
	out, err := podwire.ParseDataRevision(r.message)
	if err != nil {
		reading.State, reading.Problem = decide.ReadingFailed, err.Error()
		return reading
	}
	reading.State, reading.Revision, reading.Valid, reading.Empty, reading.Problem = decide.ReadingDone, out.Revision, out.Valid, out.Empty, out.Reason
	reading.MovedAside = out.MovedAside
	return reading
}

// parsePreserved checks the result of preserve-data against the revision it had to upload.
func parsePreserved(message string, revision int64) (podwire.PreservedData, error) {
	out, err := podwire.ParsePreservedData(message)
	if err != nil {
		return out, err
	}
	if out.Revision != revision {
		return out, fmt.Errorf("result %q names revision %d, not %d", message, out.Revision, revision)
	}
	return out, nil
}
