package statefulset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// etcdContainer runs the etcd wrapper, which starts etcd with the configuration the sidecar serves. A
// upstream wrapper (caps) serves no /phase, so it gets no liveness probe, as under the upstream druid.
func etcdContainer(etcd *druidv1alpha1.Etcd, image string, pod imagecaps.Caps) corev1.Container {
	spec, caps := etcd.Spec.Etcd, pod.EtcdWrapper
	var liveness *corev1.Probe
	if caps.Phase {
		liveness = livenessProbe("/phase", *spec.WrapperPort, corev1.URISchemeHTTP)
	}
	return withDefaults(corev1.Container{
		Name:  etcdpod.ContainerEtcd,
		Image: image,
		Args:  EtcdWrapperArgs(etcd, pod),
		Ports: []corev1.ContainerPort{
			{Name: etcdpod.PortNameClient, ContainerPort: *spec.ClientPort, Protocol: corev1.ProtocolTCP},
			{Name: etcdpod.PortNameServer, ContainerPort: *spec.ServerPort, Protocol: corev1.ProtocolTCP},
			{Name: etcdpod.PortNameWrapper, ContainerPort: *spec.WrapperPort, Protocol: corev1.ProtocolTCP},
		},
		Env:             podEnv(),
		Resources:       resources(spec.Resources),
		ReadinessProbe:  readinessProbe(etcd, caps),
		LivenessProbe:   liveness,
		VolumeMounts:    etcdMounts(etcd),
		SecurityContext: containerSecurityContext(etcd),
	})
}

// readinessProbe: a member of a multi-node cluster is ready when the wrapper says etcd serves (readyz);
// a single-node cluster asks the sidecar's /healthz, which also covers a running restore. Our wrapper
// answers plain HTTP on its port; an upstream one serves only HTTPS there once etcd's client TLS is on.
func readinessProbe(etcd *druidv1alpha1.Etcd, caps imagecaps.EtcdWrapper) *corev1.Probe {
	if etcd.Spec.Replicas <= 1 {
		return sidecarReadinessProbe(etcd)
	}
	scheme := corev1.URISchemeHTTP
	if caps.ReadyzHTTPSWithClientTLS && etcd.Spec.Etcd.ClientUrlTLS != nil {
		scheme = corev1.URISchemeHTTPS
	}
	get := &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(*etcd.Spec.Etcd.WrapperPort), Scheme: scheme}
	return readiness(get)
}

// sidecarReadinessProbe asks the sidecar's /healthz (the local member answers its status), over HTTPS when
// the sidecar serves TLS (spec.backup.tls; the kubelet does not verify the certificate and offers none).
func sidecarReadinessProbe(etcd *druidv1alpha1.Etcd) *corev1.Probe {
	return readiness(&corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(*etcd.Spec.Backup.Port), Scheme: sidecarScheme(etcd)})
}

func sidecarScheme(etcd *druidv1alpha1.Etcd) corev1.URIScheme {
	if etcd.Spec.Backup.TLS != nil {
		return corev1.URISchemeHTTPS
	}
	return corev1.URISchemeHTTP
}

// Readiness thresholds. Readiness decides when a member gets client traffic again, and when druid's pod
// update counts it as serving and goes on to the next member, so the kubelet asks every second from the
// container's first second on: a replaced member is Ready within a second of its etcd serving, instead of
// after a fixed 15 s delay (upstream etcd-druid's value), which was most of the time a deleted member took to
// come back. A probe is one loopback request that etcd answers from its local state (a serializable read,
// or the sidecar's status of the member), cheap at that rate. Until etcd serves, the failures only keep
// the pod not Ready, and the kubelet records them as Unhealthy events. Leaving the Service takes as long as
// before: 25 failures in a row, 25 s without an answer, as upstream's five failures five seconds apart, so
// a member that is busy for a moment keeps its clients.
const (
	readinessInitialDelaySeconds = 1
	readinessPeriodSeconds       = 1
	readinessTimeoutSeconds      = 1
	readinessFailureThreshold    = 25
)

func readiness(get *corev1.HTTPGetAction) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: get},
		InitialDelaySeconds: readinessInitialDelaySeconds,
		PeriodSeconds:       readinessPeriodSeconds,
		TimeoutSeconds:      readinessTimeoutSeconds,
		SuccessThreshold:    1,
		FailureThreshold:    readinessFailureThreshold,
	}
}

// Liveness thresholds. A liveness failure restarts the container, so it must mean "the process is hung",
// never "the process is busy": a member may restore a large database for many minutes, or defragment
// for up to spec.etcd.etcdDefragTimeout (15m), and restarting it then only starts that work over.
// Both probes therefore ask an endpoint that the process answers from its own HTTP goroutines, from the
// moment it starts and independently of etcd's state:
//   - etcd container: the wrapper's GET /phase (wrapper port, plain HTTP, which the port always accepts).
//     The port listens before the wrapper asks the sidecar for an initialization, so it answers while the
//     wrapper waits, while the sidecar restores, while etcd starts and while it defragments (the
//     embedded etcd runs in the wrapper's process, but /phase takes no etcd lock).
//   - backup-restore container: the sidecar's GET /livez, which answers 200 whenever its HTTP server
//     serves; not /healthz, which fails while etcd does not run (e.g. during a restore).
//
// The numbers: the first probe after 15 s (a process needs a moment to open its port); then every 10 s
// with a 5 s timeout, generous on a node whose CPU a restore or a defragmentation saturates; six
// failures in a row, so a process is restarted only after a full minute in which it answered no probe
// at all. Readiness (every second, 25 failures) never restarts anything.
const (
	livenessInitialDelaySeconds = 15
	livenessPeriodSeconds       = 10
	livenessTimeoutSeconds      = 5
	livenessFailureThreshold    = 6
)

// livenessProbe asks path on port; it fails only when the process does not answer (see the constants).
func livenessProbe(path string, port int32, scheme corev1.URIScheme) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port), Scheme: scheme}},
		InitialDelaySeconds: livenessInitialDelaySeconds,
		PeriodSeconds:       livenessPeriodSeconds,
		TimeoutSeconds:      livenessTimeoutSeconds,
		SuccessThreshold:    1,
		FailureThreshold:    livenessFailureThreshold,
	}
}

// backupRestoreContainer runs `etcdbrctl server`, the sidecar that initializes, backs up and reports on
// its member. It has a liveness probe (a hung sidecar is restarted) but no readiness probe of its own:
// a pod is Ready only when every container is, and a NotReady pod leaves the client Service. Of a
// single member, the etcd container's readiness already asks the sidecar's /healthz (readinessProbe),
// so the pod follows the sidecar and its backups there, as upstream etcd-druid's DEP-01 wants. Of a multi-member cluster, a
// sidecar readiness probe would take a member whose etcd serves out of the Service whenever its sidecar
// crash-loops or hangs — and a cause all sidecars share (a broken backup secret, a bad image) would cut
// every client off a quorate cluster; DEP-01 itself rules out cutting clients off for backups there.
// An upstream sidecar (caps) serves no /livez and gets no liveness probe, as under the upstream druid.
func backupRestoreContainer(etcd *druidv1alpha1.Etcd, image string, caps imagecaps.BackupRestore, local *storeaccess.LocalMount) corev1.Container {
	env := podEnv()
	env = append(env, storeaccess.StoreCredentialsEnv(etcd.Spec.Backup.Store, storeaccess.SecretMountPath(etcd.Spec.Backup.Store, false), "")...)
	if storageProvider(etcd) == druidv1alpha1.StorageProviderLocal {
		// The Local store root is $HOME/<container>; pin HOME so that it matches the mount for any uid.
		env = append(env, corev1.EnvVar{Name: etcdpod.EnvHome, Value: etcdpod.LocalHome})
	}
	var liveness *corev1.Probe
	if caps.Livez {
		liveness = livenessProbe("/livez", *etcd.Spec.Backup.Port, sidecarScheme(etcd))
	}
	return withDefaults(corev1.Container{
		Name:            etcdpod.ContainerBackupRestore,
		Image:           image,
		Args:            BackupRestoreArgs(etcd, caps),
		Ports:           []corev1.ContainerPort{{Name: etcdpod.PortNameBackupRestore, ContainerPort: *etcd.Spec.Backup.Port, Protocol: corev1.ProtocolTCP}},
		Env:             env,
		Resources:       resources(etcd.Spec.Backup.Resources),
		LivenessProbe:   liveness,
		VolumeMounts:    sidecarMounts(etcd, caps, local),
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
