package compaction

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Names and paths of the compaction Job.
const (
	// ComponentCompactionJob is the app.kubernetes.io/component label value of compaction Jobs and pods.
	ComponentCompactionJob = "etcd-compactor"
	// ContainerCompactor is the Job's only container.
	ContainerCompactor = "compactor"
	// DataMountPath holds the temporary etcd the compaction restores into; an emptyDir, because the result
	// is uploaded and nothing of it is kept.
	DataMountPath = "/var/etcd/data"
	// BackoffLimit lets the Job controller retry a failed pod once (a transient store error) before the
	// Job fails; further retries are the controller's, with back-off.
	BackoffLimit = int32(1)

	volumeData         = "compaction-data"
	volumeBackupSecret = "etcd-backup"
	volumeLocalStore   = "local-backup"
)

// jobInput is everything the Job depends on besides the (defaulted) Etcd.
type jobInput struct {
	image string
	// caps are the capabilities of image's etcdbrctl.
	caps           imagecaps.BackupRestore
	activeDeadline time.Duration
	// local is the Local store's checked volume and mount; nil for other providers.
	local *storeaccess.LocalMount
}

// CompactArgs are the arguments of `etcdbrctl compact` for the Etcd: restore the latest full and delta
// snapshots into a temporary data dir, compact and defragment, upload a new full snapshot, and renew the full
// snapshot lease with its revision (which brings the delta events below the threshold). The store location
// is the sidecar's, so the new snapshot lands where the sidecar looks; no compression is passed, since
// `compact` compresses the new snapshot like the snapshots it replaces (ours and upstream's alike). caps add
// the flags an upstream etcdbrctl needs besides ours (see upstreamCompactArgs).
func CompactArgs(etcd *druidv1alpha1.Etcd, caps imagecaps.BackupRestore) []string {
	backup := etcd.Spec.Backup
	args := []string{
		"compact",
		podwire.Arg(podwire.FlagDataDir, DataMountPath+"/compaction.etcd"),
		podwire.Arg(podwire.FlagEnableSnapshotLeaseRenewal, "true"),
		podwire.Arg(podwire.FlagFullSnapshotLeaseName, druidv1alpha1.FullSnapshotLeaseName(etcd)),
		podwire.Arg(podwire.FlagDeltaSnapshotLeaseName, druidv1alpha1.DeltaSnapshotLeaseName(etcd)),
	}
	args = append(args, storeaccess.StoreLocationArgs(backup.Store, "")...)
	if backup.EtcdSnapshotTimeout != nil {
		args = append(args, podwire.Arg(podwire.FlagEtcdSnapshotTimeout, backup.EtcdSnapshotTimeout.Duration.String()))
	}
	if etcd.Spec.Etcd.EtcdDefragTimeout != nil {
		args = append(args, podwire.Arg(podwire.FlagEtcdDefragTimeout, etcd.Spec.Etcd.EtcdDefragTimeout.Duration.String()))
	}
	if caps.UpstreamDefaults {
		args = append(args, upstreamCompactArgs(etcd)...)
	}
	return args
}

// upstreamCompactArgs are the flags the upstream `compact` needs besides ours, with the values the
// upstream druid passes: its temporary directories on the Job's data volume (its defaults, a path relative
// to the working directory and /tmp, are not writable for uid 65532 in every image), and the embedded
// etcd it restores into with the member's quota and auto-compaction.
func upstreamCompactArgs(etcd *druidv1alpha1.Etcd) []string {
	args := []string{
		podwire.Arg(podwire.FlagRestorationTempSnapshotsDir, DataMountPath+"/compaction.restoration.temp"),
		podwire.Arg(podwire.FlagSnapstoreTempDirectory, DataMountPath+"/tmp"),
	}
	return append(args, statefulset.UpstreamEmbeddedEtcdArgs(etcd)...)
}

// newJob renders the compaction Job `<n>-compactor` for a defaulted Etcd with a store. The Job carries the
// managed labels and the Etcd as controller owner (it goes with the Etcd); its pod deliberately lacks
// app.kubernetes.io/part-of, which together with managed-by is the selector of the etcd Services, PDB and
// StatefulSet — a compaction pod must never receive client traffic or count as a member.
func newJob(etcd *druidv1alpha1.Etcd, in jobInput) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.CompactionJobName(etcd), Namespace: etcd.Namespace}}
	component.ApplyManagedMeta(job, etcd, ComponentCompactionJob)

	podLabels := component.JobPodLabels(ComponentCompactionJob, job.Name, storeaccess.StoreNetworkPolicyLabels())

	store := etcd.Spec.Backup.Store
	volumes := []corev1.Volume{{Name: volumeData, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	mounts := []corev1.VolumeMount{{Name: volumeData, MountPath: DataMountPath}}
	env := []corev1.EnvVar{{Name: etcdpod.EnvPodNamespace, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}
	if store.SecretRef != nil && store.SecretRef.Name != "" {
		volumes = append(volumes, corev1.Volume{Name: volumeBackupSecret, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: store.SecretRef.Name, DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode)}}})
		mountPath := storeaccess.SecretMountPath(store, false)
		mounts = append(mounts, corev1.VolumeMount{Name: volumeBackupSecret, MountPath: mountPath, ReadOnly: true})
		env = append(env, storeaccess.StoreCredentialsEnv(store, mountPath, "")...)
	}
	if in.local != nil {
		volumes, mounts = append(volumes, in.local.Volume), append(mounts, in.local.Mount)
		env = append(env, corev1.EnvVar{Name: etcdpod.EnvHome, Value: etcdpod.LocalHome})
	}

	var resources corev1.ResourceRequirements
	if c := etcd.Spec.Backup.SnapshotCompaction; c != nil && c.Resources != nil {
		resources = *c.Resources.DeepCopy()
	}
	uid := druidv1alpha1.DefaultRunAsUser
	job.Spec = batchv1.JobSpec{
		BackoffLimit:          ptr.To(BackoffLimit),
		ActiveDeadlineSeconds: ptr.To(int64(in.activeDeadline / time.Second)),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				// The etcd pods' service account may renew the snapshot leases, which the compactor does.
				ServiceAccountName: druidv1alpha1.ServiceAccountName(etcd),
				PriorityClassName:  ptr.Deref(etcd.Spec.PriorityClassName, ""),
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid), FSGroup: ptr.To(uid),
				},
				Containers: []corev1.Container{{
					Name:            ContainerCompactor,
					Image:           in.image,
					ImagePullPolicy: corev1.PullIfNotPresent,
					Args:            CompactArgs(etcd, in.caps),
					Env:             env,
					Resources:       resources,
					VolumeMounts:    mounts,
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
				Volumes: volumes,
			},
		},
	}
	return job
}

// jobImage is the Etcd's pinned backup-restore image or the configured one.
func jobImage(etcd *druidv1alpha1.Etcd, configured string) string {
	if etcd.Spec.Backup.Image != nil && *etcd.Spec.Backup.Image != "" {
		return *etcd.Spec.Backup.Image
	}
	return configured
}

// jobImageAndCaps are the Job's image and the capabilities of its etcdbrctl under druid's setting.
func jobImageAndCaps(etcd *druidv1alpha1.Etcd, cfg config.CompactionController) (string, imagecaps.BackupRestore) {
	image := jobImage(etcd, cfg.BackupRestoreImage)
	return image, imagecaps.BackupRestoreOf(cfg.ImageCompatibility.KindOf(image))
}

// jobOutcome is where a compaction Job stands.
type jobOutcome int

const (
	jobRunning jobOutcome = iota
	jobSucceeded
	jobFailed
)

// outcomeOf reads the Job's terminal conditions (Complete, Failed) as the Job controller sets them; the
// failure condition is returned for its reason and message.
func outcomeOf(job *batchv1.Job) (jobOutcome, *batchv1.JobCondition) {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return jobSucceeded, c
		case batchv1.JobFailed:
			return jobFailed, c
		}
	}
	return jobRunning, nil
}
