package copybackupstask

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// The worker Job's names and paths. The flags of `etcdbrctl copy` form the contract with the binary:
//
//	--storage-provider, --store-container, --store-prefix, --store-endpoint-override          target store
//	--source-storage-provider, --source-store-container, --source-store-prefix,
//	--source-store-endpoint-override                                                           source store
//	--max-backup-age=<days>, --max-backups-to-copy=<n>                                        what to copy
//	--wait-for-final-snapshot=true, --wait-for-final-snapshot-timeout=<duration>               when to copy
//
// Credentials: the target secret is mounted at TargetSecretMountPath and named by the provider's variable
// (e.g. AWS_APPLICATION_CREDENTIALS); the source secret at SourceSecretMountPath, named by the same variable
// with the prefix SOURCE_ (e.g. SOURCE_AWS_APPLICATION_CREDENTIALS). GCS secrets have directories of their
// own (storeaccess.SecretMountPath).
const (
	// ComponentCopyBackupsJob is the app.kubernetes.io/component label value of worker Jobs and pods.
	ComponentCopyBackupsJob = "etcd-copy-backups-task"
	// ContainerCopy is the Job's only container.
	ContainerCopy = "copy-backups"
	// TargetSecretMountPath holds the target store's credentials.
	TargetSecretMountPath = etcdpod.BackupSecretMountPath
	// SourceSecretMountPath holds the source store's credentials.
	SourceSecretMountPath = storeaccess.SourceSecretMountPath
	// SourceEnvPrefix prefixes the source store's credentials variable.
	SourceEnvPrefix = "SOURCE_"
	// SourceFlagPrefix prefixes the source store's location flags.
	SourceFlagPrefix = podwire.FlagPrefixSource
	// BackoffLimit lets the Job controller retry a failed copy pod a few times (a copy resumes: it skips
	// snapshots already in the target) before the task is marked failed.
	BackoffLimit = int32(3)

	volumeTargetSecret = "etcd-backup"
	volumeSourceSecret = "source-etcd-backup"
	volumeTargetLocal  = "local-backup"
	volumeSourceLocal  = "source-local-backup"
)

// WorkerJobName is the Job that runs the copy of a task.
func WorkerJobName(task *druidv1alpha1.EtcdCopyBackupsTask) string { return task.Name + "-worker" }

// CopyArgs are the arguments of `etcdbrctl copy` for the task (see the flag contract above).
func CopyArgs(task *druidv1alpha1.EtcdCopyBackupsTask) []string {
	spec := task.Spec
	args := []string{"copy"}
	args = append(args, storeaccess.StoreLocationArgs(&spec.TargetStore, "")...)
	args = append(args, storeaccess.StoreLocationArgs(&spec.SourceStore, SourceFlagPrefix)...)
	if spec.MaxBackupAge != nil {
		args = append(args, podwire.Arg(podwire.FlagMaxBackupAge, fmt.Sprintf("%d", *spec.MaxBackupAge)))
	}
	if spec.MaxBackups != nil {
		args = append(args, podwire.Arg(podwire.FlagMaxBackupsToCopy, fmt.Sprintf("%d", *spec.MaxBackups)))
	}
	if w := spec.WaitForFinalSnapshot; w != nil && w.Enabled {
		args = append(args, podwire.Arg(podwire.FlagWaitForFinalSnapshot, "true"))
		if w.Timeout != nil {
			args = append(args, podwire.Arg(podwire.FlagWaitForFinalSnapshotTimeout, w.Timeout.Duration.String()))
		}
	}
	return args
}

// localStores are the checked volumes of Local stores (nil for other providers).
type localStores struct{ target, source *storeaccess.LocalMount }

// newJob renders the worker Job. Its pod gets spec.podLabels (e.g. Gardener's network policy labels) under
// druid's own labels, never a member's (component.JobPodLabels); it needs no API access, so no service account token is mounted.
func newJob(task *druidv1alpha1.EtcdCopyBackupsTask, image string, locals localStores) *batchv1.Job {
	name := WorkerJobName(task)
	labels := map[string]string{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue,
		druidv1alpha1.LabelComponentKey: ComponentCopyBackupsJob,
		druidv1alpha1.LabelAppNameKey:   name,
	}
	podLabels := component.JobPodLabels(ComponentCopyBackupsJob, name, task.Spec.PodLabels)

	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	var env []corev1.EnvVar
	addStore := func(store *druidv1alpha1.StoreSpec, secretVolume string, source bool, envPrefix string, local *storeaccess.LocalMount) {
		if store.SecretRef != nil && store.SecretRef.Name != "" {
			mountPath := storeaccess.SecretMountPath(store, source)
			volumes = append(volumes, corev1.Volume{Name: secretVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: store.SecretRef.Name, DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode)}}})
			mounts = append(mounts, corev1.VolumeMount{Name: secretVolume, MountPath: mountPath, ReadOnly: true})
			env = append(env, storeaccess.StoreCredentialsEnv(store, mountPath, envPrefix)...)
		}
		if local != nil {
			volumes, mounts = append(volumes, local.Volume), append(mounts, local.Mount)
		}
	}
	addStore(&task.Spec.TargetStore, volumeTargetSecret, false, "", locals.target)
	source := locals.source
	if source != nil {
		// etcdbrctl copy only lists and fetches the source: whatever goes wrong, it cannot change it.
		source = source.ReadOnly()
	}
	addStore(&task.Spec.SourceStore, volumeSourceSecret, true, SourceEnvPrefix, source)
	if locals.target != nil || locals.source != nil {
		env = append(env, corev1.EnvVar{Name: etcdpod.EnvHome, Value: etcdpod.LocalHome})
	}

	uid := druidv1alpha1.DefaultRunAsUser
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: task.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "EtcdCopyBackupsTask",
				Name: task.Name, UID: task.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(BackoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid), FSGroup: ptr.To(uid),
					},
					Containers: []corev1.Container{{
						Name:            ContainerCopy,
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            CopyArgs(task),
						Env:             env,
						VolumeMounts:    mounts,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: volumes,
				},
			},
		},
	}
}
