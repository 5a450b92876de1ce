package statefulset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// etcdContainer runs the etcd wrapper, which starts etcd with the configuration the sidecar serves.
func etcdContainer(etcd *druidv1alpha1.Etcd, image string) corev1.Container {
	spec := etcd.Spec.Etcd
	return withDefaults(corev1.Container{
		Name:  etcdpod.ContainerEtcd,
		Image: image,
		Args:  EtcdWrapperArgs(etcd),
		Ports: []corev1.ContainerPort{
			{Name: etcdpod.PortNameClient, ContainerPort: *spec.ClientPort, Protocol: corev1.ProtocolTCP},
			{Name: etcdpod.PortNameServer, ContainerPort: *spec.ServerPort, Protocol: corev1.ProtocolTCP},
			{Name: etcdpod.PortNameWrapper, ContainerPort: *spec.WrapperPort, Protocol: corev1.ProtocolTCP},
		},
		Env:             podEnv(),
		Resources:       resources(spec.Resources),
		ReadinessProbe:  readinessProbe(etcd),
		VolumeMounts:    etcdMounts(etcd),
		SecurityContext: containerSecurityContext(etcd),
	})
}

// readinessProbe: a member of a multi-node cluster is ready when the wrapper says etcd serves (readyz);
// a single-node cluster asks the sidecar's /healthz, which also covers a running restore.
func readinessProbe(etcd *druidv1alpha1.Etcd) *corev1.Probe {
	get := &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(*etcd.Spec.Etcd.WrapperPort), Scheme: corev1.URISchemeHTTP}
	if etcd.Spec.Replicas <= 1 {
		get = &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(*etcd.Spec.Backup.Port), Scheme: corev1.URISchemeHTTP}
		if etcd.Spec.Backup.TLS != nil {
			get.Scheme = corev1.URISchemeHTTPS
		}
	}
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: get},
		InitialDelaySeconds: 15,
		PeriodSeconds:       5,
		TimeoutSeconds:      1,
		SuccessThreshold:    1,
		FailureThreshold:    5,
	}
}

// backupRestoreContainer runs `etcdbrctl server`, the sidecar that initializes, backs up and reports on
// its member.
func backupRestoreContainer(etcd *druidv1alpha1.Etcd, image string) corev1.Container {
	env := podEnv()
	env = append(env, StoreCredentialsEnv(etcd.Spec.Backup.Store, etcdpod.BackupSecretMountPath, "")...)
	if storageProvider(etcd) == druidv1alpha1.StorageProviderLocal {
		// The Local store root is $HOME/<container>; pin HOME so that it matches the mount for any uid.
		env = append(env, corev1.EnvVar{Name: etcdpod.EnvHome, Value: etcdpod.LocalHome})
	}
	return withDefaults(corev1.Container{
		Name:            etcdpod.ContainerBackupRestore,
		Image:           image,
		Args:            BackupRestoreArgs(etcd),
		Ports:           []corev1.ContainerPort{{Name: etcdpod.PortNameBackupRestore, ContainerPort: *etcd.Spec.Backup.Port, Protocol: corev1.ProtocolTCP}},
		Env:             env,
		Resources:       resources(etcd.Spec.Backup.Resources),
		VolumeMounts:    backupRestoreMounts(etcd),
		SecurityContext: containerSecurityContext(etcd),
	})
}

// podEnv gives both containers their pod's name and namespace: the sidecar resolves its member entry and
// its lease by POD_NAME.
func podEnv() []corev1.EnvVar {
	field := func(p string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: p}}
	}
	return []corev1.EnvVar{
		{Name: etcdpod.EnvPodName, ValueFrom: field("metadata.name")},
		{Name: etcdpod.EnvPodNamespace, ValueFrom: field("metadata.namespace")},
	}
}

func resources(r *corev1.ResourceRequirements) corev1.ResourceRequirements {
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	return *r.DeepCopy()
}

// withDefaults sets the container fields the apiserver would default.
func withDefaults(c corev1.Container) corev1.Container {
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	return c
}
