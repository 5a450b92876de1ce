package component_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

func container(g Gomega, sts *appsv1.StatefulSet, name string) corev1.Container {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	g.Expect(name).To(BeEmpty(), "container %s missing", name)
	return corev1.Container{}
}

func mounts(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		out[m.Name] = m.MountPath
	}
	return out
}

func volumesByName(sts *appsv1.StatefulSet) map[string]corev1.VolumeSource {
	out := map[string]corev1.VolumeSource{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		out[v.Name] = v.VolumeSource
	}
	return out
}

func syncStatefulSet(t *testing.T, etcd *druidv1alpha1.Etcd) *appsv1.StatefulSet {
	t.Helper()
	registry, _ := newRegistry(t)
	NewWithT(t).Expect(registry.Get(component.KindStatefulSet).Sync(context.Background(), etcd)).To(Succeed())
	return get(t, etcd.Namespace, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
}

func TestStatefulSetShape(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, withPeerTLS, withClientTLS, func(e *druidv1alpha1.Etcd) {
		e.Spec.Annotations = map[string]string{"pod": "annotation"}
		e.Spec.StorageClass = ptr.To("fast")
		e.Spec.StorageCapacity = ptr.To(resourceMust("25Gi"))
		e.Spec.PriorityClassName = ptr.To("gardener-system-500")
		e.Spec.Etcd.Image = ptr.To("example.org/pinned-etcd:v9")
		e.Spec.SchedulingConstraints.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/part-of": "etcd-main"}},
		}}
	})
	sts := syncStatefulSet(t, etcd)

	g.Expect(sts.Spec.ServiceName).To(Equal("etcd-main-peer"))
	g.Expect(sts.Spec.PodManagementPolicy).To(Equal(appsv1.ParallelPodManagement))
	g.Expect(sts.Spec.UpdateStrategy).To(Equal(appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}))
	g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}))
	g.Expect(sts.Spec.Template.Labels).To(Equal(map[string]string{"role": "main", "app": "etcd-statefulset",
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}))
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue("pod", "annotation"))
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue("checksum/etcd-configmap", MatchRegexp("^[0-9a-f]{64}$")))

	g.Expect(sts.Spec.VolumeClaimTemplates).To(HaveLen(1))
	pvc := sts.Spec.VolumeClaimTemplates[0]
	g.Expect(pvc.Name).To(Equal("etcd-main"))
	g.Expect(pvc.Spec.StorageClassName).To(Equal(ptr.To("fast")))
	g.Expect(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resourceMust("25Gi")))

	pod := sts.Spec.Template.Spec
	g.Expect(pod.ServiceAccountName).To(Equal("etcd-main"))
	g.Expect(pod.HostAliases).To(Equal([]corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{"etcd-main-local"}}}))
	g.Expect(pod.PriorityClassName).To(Equal("gardener-system-500"))
	g.Expect(pod.TopologySpreadConstraints).To(HaveLen(1))
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	g.Expect(pod.SecurityContext.RunAsUser).To(Equal(ptr.To(int64(65532))))
	g.Expect(pod.SecurityContext.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))

	etcdC := container(g, sts, "etcd")
	g.Expect(etcdC.Image).To(Equal("example.org/pinned-etcd:v9"), "spec.etcd.image overrides druid's image")
	g.Expect(etcdC.Ports).To(ConsistOf(
		corev1.ContainerPort{Name: "client", ContainerPort: 2379, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "server", ContainerPort: 2380, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "wrapper", ContainerPort: 9095, Protocol: corev1.ProtocolTCP}))
	g.Expect(etcdC.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
	g.Expect(etcdC.ReadinessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(9095)))
	g.Expect(etcdC.LivenessProbe.HTTPGet.Path).To(Equal("/phase"))
	g.Expect(etcdC.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(9095)))
	g.Expect(mounts(etcdC)).To(Equal(map[string]string{
		"etcd-main":                  "/var/etcd/data",
		"tmp":                        "/tmp",
		"client-url-ca-etcd":         "/var/etcd/ssl/ca",
		"client-url-etcd-server-tls": "/var/etcd/ssl/server",
		"client-url-etcd-client-tls": "/var/etcd/ssl/client",
		"peer-url-ca-etcd":           "/var/etcd/ssl/peer/ca",
		"peer-url-etcd-server-tls":   "/var/etcd/ssl/peer/server",
	}))

	br := container(g, sts, "backup-restore")
	g.Expect(br.Image).To(Equal(testImages.BackupRestore), "druid's configured image without override")
	g.Expect(br.Args[0]).To(Equal("server"))
	g.Expect(mounts(br)).To(HaveKeyWithValue("etcd-config-file", "/var/etcd/config"))
	g.Expect(mounts(br)).To(HaveKeyWithValue("etcd-main", "/var/etcd/data"))
	g.Expect(mounts(br)).To(HaveKeyWithValue("tmp", "/tmp"))
	g.Expect(br.ReadinessProbe).To(BeNil(), "the sidecar's readiness must not decide whether a serving member gets client traffic")
	g.Expect(br.LivenessProbe.HTTPGet.Path).To(Equal("/livez"))
	g.Expect(br.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(8080)))
	for _, c := range []corev1.Container{etcdC, br} {
		g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)), c.Name)
	}
	g.Expect(br.Env).To(ContainElements(
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}))

	vols := volumesByName(sts)
	g.Expect(vols["tmp"].EmptyDir).NotTo(BeNil())
	g.Expect(vols["etcd-config-file"].ConfigMap.Name).To(Equal("etcd-main-config"))
	g.Expect(vols["etcd-config-file"].ConfigMap.Items).To(Equal([]corev1.KeyToPath{{Key: "etcd.conf.yaml", Path: "etcd.conf.yaml"}}))
	g.Expect(vols["peer-url-ca-etcd"].Secret.SecretName).To(Equal("ca-etcd-peer"))
	g.Expect(vols["peer-url-etcd-server-tls"].Secret.SecretName).To(Equal("etcd-peer-server"))
	g.Expect(vols["client-url-etcd-client-tls"].Secret.SecretName).To(Equal("etcd-client"))
}

func TestSingleNodeUsesSidecarHealthAndRootWhenAsked(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) { e.Spec.RunAsRoot = ptr.To(true) })
	sts := syncStatefulSet(t, etcd)
	probe := container(g, sts, "etcd").ReadinessProbe
	g.Expect(probe.HTTPGet.Path).To(Equal("/healthz"))
	g.Expect(probe.HTTPGet.Port).To(Equal(intstr.FromInt32(8080)))
	g.Expect(sts.Spec.Template.Spec.SecurityContext.RunAsUser).To(BeNil())
	g.Expect(sts.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeNil())
}

func TestBackupRestoreFlagsForS3Store(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, withClientTLS, func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.DefragmentationSchedule = ptr.To("0 3 * * *")
		e.Spec.Etcd.HeartbeatDuration = &metav1.Duration{Duration: 15 * time.Second}
		e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcdbr"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcdbr-server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "etcdbr-client"},
		}
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{
			Provider: ptr.To(druidv1alpha1.StorageProviderAWS), Container: ptr.To("bucket-1"), Prefix: "shoot--p--s--uid/etcd-main",
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"}, EndpointOverride: ptr.To("https://s3.local:7070"),
		}
		e.Spec.Backup.FullSnapshotSchedule = ptr.To("0 */24 * * *")
		e.Spec.Backup.DeltaSnapshotPeriod = &metav1.Duration{Duration: 5 * time.Minute}
		e.Spec.Backup.DeltaSnapshotMemoryLimit = ptr.To(resourceMust("1Gi"))
		e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyLimitBased)
		e.Spec.Backup.MaxBackupsLimitBasedGC = ptr.To(int32(5))
		e.Spec.Backup.GarbageCollectionPeriod = &metav1.Duration{Duration: 12 * time.Hour}
		e.Spec.Backup.DeltaSnapshotRetentionPeriod = &metav1.Duration{Duration: 15 * 24 * time.Hour}
		e.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)}
	})
	sts := syncStatefulSet(t, etcd)
	br := container(g, sts, "backup-restore")

	g.Expect(br.Args).To(Equal([]string{
		"server",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=15s",
		"--data-dir=/var/etcd/data/new.etcd",
		"--endpoints=https://etcd-main-local:2379",
		"--service-endpoints=https://etcd-main-client." + ns + ".svc:2379",
		"--server-port=8080",
		"--insecure-transport=false",
		"--cacert=/var/etcd/ssl/ca/bundle.crt",
		"--cert=/var/etcd/ssl/client/tls.crt",
		"--key=/var/etcd/ssl/client/tls.key",
		"--server-cert=/var/etcdbr/ssl/server/tls.crt",
		"--server-key=/var/etcdbr/ssl/server/tls.key",
		"--server-cacert=/var/etcdbr/ssl/ca/ca.crt",
		"--defragmentation-schedule=0 3 * * *",
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-main-full-snap",
		"--delta-snapshot-lease-name=etcd-main-delta-snap",
		"--storage-provider=S3",
		"--store-container=bucket-1",
		"--store-prefix=shoot--p--s--uid/etcd-main",
		"--store-endpoint-override=https://s3.local:7070",
		"--schedule=0 */24 * * *",
		"--delta-snapshot-period=5m0s",
		"--delta-snapshot-memory-limit=1073741824",
		"--garbage-collection-policy=LimitBased",
		"--max-backups=5",
		"--garbage-collection-period=12h0m0s",
		"--delta-snapshot-retention-period=360h0m0s",
		"--compress-snapshots=true",
		"--compression-policy=gzip",
	}))
	g.Expect(mounts(br)).To(HaveKeyWithValue("etcd-backup", "/var/etcd-backup"))
	g.Expect(volumesByName(sts)["etcd-backup"].Secret.SecretName).To(Equal("etcd-backup"))
	g.Expect(br.Env).To(ContainElement(corev1.EnvVar{Name: "AWS_APPLICATION_CREDENTIALS", Value: "/var/etcd-backup"}))

	etcdC := container(g, sts, "etcd")
	g.Expect(etcdC.Args).To(ContainElements(
		"--backup-restore-host-port=etcd-main-local:8080",
		"--backup-restore-tls-enabled=true",
		"--backup-restore-ca-cert-bundle-path=/var/etcdbr/ssl/ca/ca.crt",
		"--etcd-client-cert-path=/var/etcd/ssl/client/tls.crt"))
}

// An Etcd that pins Gardener's released images (spec.backup.image, spec.etcd.image) gets a StatefulSet
// those images run: druid's default setting (auto) tells them by their repository. The sidecar gets no
// --server-cacert (the upstream etcdbrctl would refuse it) but upstream druid's settings of its
// defaults; no container gets a liveness probe the upstream images cannot answer; /readyz is HTTPS.
func TestUpstreamImagesGetTheirFlagsAndProbes(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	const (
		upstreamBR      = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1"
		upstreamWrapper = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcd-wrapper:v0.6.2"
	)
	etcd := createEtcd(t, ns, 3, withClientTLS, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Image = ptr.To(upstreamBR)
		e.Spec.Etcd.Image = ptr.To(upstreamWrapper)
		e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcdbr"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcdbr-server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "etcdbr-client"},
		}
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{
			Provider: ptr.To(druidv1alpha1.StorageProviderAWS), Container: ptr.To("bucket-1"), Prefix: "shoot--p--s--uid/etcd-main",
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
		}
	})
	sts := syncStatefulSet(t, etcd)
	br, etcdC := container(g, sts, "backup-restore"), container(g, sts, "etcd")
	g.Expect(br.Image).To(Equal(upstreamBR))
	g.Expect(etcdC.Image).To(Equal(upstreamWrapper))

	g.Expect(br.Args).NotTo(ContainElement(HavePrefix("--server-cacert")))
	g.Expect(br.Args).To(ContainElements(
		"--server-cert=/var/etcdbr/ssl/server/tls.crt",
		"--insecure-skip-tls-verify=false",
		"--use-etcd-wrapper=true",
		"--restoration-temp-snapshots-dir=/var/etcd/data/restoration.temp",
		"--snapstore-temp-directory=/var/etcd/data/temp",
		"--embedded-etcd-quota-bytes=8589934592",
	))
	g.Expect(br.LivenessProbe).To(BeNil(), "the upstream sidecar serves no /livez")
	g.Expect(etcdC.LivenessProbe).To(BeNil(), "the upstream wrapper serves no /phase")
	g.Expect(etcdC.ReadinessProbe.HTTPGet.Scheme).To(Equal(corev1.URISchemeHTTPS), "the upstream wrapper serves /readyz over HTTPS with client TLS")
	g.Expect(etcdC.Args).To(ContainElement("--etcd-client-port=2379"))
	g.Expect(etcdC.Args).NotTo(ContainElement(HavePrefix("--step-etcd-")), "the upstream wrapper carries no old etcd servers")

	// Back to druid's images (ours): the flags and probes of our binaries return.
	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Image, e.Spec.Etcd.Image = nil, nil })
	sts = syncStatefulSet(t, etcd)
	br, etcdC = container(g, sts, "backup-restore"), container(g, sts, "etcd")
	g.Expect(br.Image).To(Equal(testImages.BackupRestore))
	g.Expect(br.Args).To(ContainElement("--server-cacert=/var/etcdbr/ssl/ca/ca.crt"))
	g.Expect(br.Args).NotTo(ContainElement(HavePrefix("--use-etcd-wrapper")))
	g.Expect(etcdC.Args).To(ContainElements("--step-etcd-3.5-binary=/usr/local/bin/etcd-3.5", "--step-etcd-3.6-binary=/usr/local/bin/etcd-3.6"))
	g.Expect(br.LivenessProbe).NotTo(BeNil())
	g.Expect(etcdC.LivenessProbe).NotTo(BeNil())
	g.Expect(etcdC.ReadinessProbe.HTTPGet.Scheme).To(Equal(corev1.URISchemeHTTP))
}

func TestLocalProviderMountsTheHostPathFromTheBackupSecret(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: ns},
		Data:       map[string][]byte{"hostPath": []byte("/srv/buckets")},
	})).To(Succeed())
	etcd := createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Container: ptr.To("bkp"),
			Prefix: "etcd-main", SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
	})
	sts := syncStatefulSet(t, etcd)
	// The allowed directory is the volume, the store is selected by subPath: the kubelet refuses a subPath
	// that leaves the volume through a symlink.
	g.Expect(volumesByName(sts)["local-backup"].HostPath).To(Equal(&corev1.HostPathVolumeSource{Path: "/srv/buckets", Type: ptr.To(corev1.HostPathDirectoryOrCreate)}))
	br := container(g, sts, "backup-restore")
	g.Expect(mounts(br)).To(HaveKeyWithValue("local-backup", "/home/nonroot/bkp"))
	g.Expect(br.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "local-backup", MountPath: "/home/nonroot/bkp", SubPath: "bkp"}))
	g.Expect(br.Env).To(ContainElement(corev1.EnvVar{Name: "HOME", Value: "/home/nonroot"}))
	g.Expect(br.Args).To(ContainElements("--storage-provider=Local", "--store-container=bkp", "--store-prefix=etcd-main"))
	g.Expect(br.Args).To(ContainElement("--insecure-transport=true"))
	g.Expect(br.Args).To(ContainElement("--endpoints=http://etcd-main-local:2379"))
}

// TestLocalProviderRefusesHostPathsDruidDoesNotAllow: a backup secret naming the node's root, or any
// directory outside druid's configured ones, gets no StatefulSet (nothing mounts it); the sync error names
// the secret, its key and the allowed directories.
func TestLocalProviderRefusesHostPathsDruidDoesNotAllow(t *testing.T) {
	for hostPath, want := range map[string]string{
		"/":                          "would mount the node's whole filesystem",
		"/var/lib/kubelet":           "not below a directory druid allows for the Local backup provider (/etc/gardener/local-backupbuckets, /srv/buckets",
		"/srv/buckets/../../etc/foo": "not below a directory druid allows",
	} {
		t.Run(hostPath, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.CreateNamespace(t)
			g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: ns},
				Data:       map[string][]byte{"hostPath": []byte(hostPath)},
			})).To(Succeed())
			etcd := createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
				e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Container: ptr.To("bkp"),
					Prefix: "etcd-main", SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
			})
			registry, _ := newRegistry(t)
			err := registry.Get(component.KindStatefulSet).Sync(context.Background(), etcd)
			g.Expect(err).To(MatchError(ContainSubstring(want)))
			g.Expect(err.Error()).To(ContainSubstring("backup secret " + ns + "/etcd-backup, key hostPath"))
			g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "etcd-main"}, &appsv1.StatefulSet{}))).To(BeTrue(), "no StatefulSet")
		})
	}
}

// spec.etcd.wrapperPort 9096 (Gardener's etcd-events as a static pod): the wrapper listens there, the probes
// ask there, and our sidecar is told where to ask for the wrapper's phase and to stop etcd.
func TestWrapperPortFromTheSpecReachesWrapperProbesAndSidecar(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.WrapperPort = ptr.To(int32(9096)) })
	sts := syncStatefulSet(t, etcd)

	etcdC := container(g, sts, "etcd")
	g.Expect(etcdC.Ports).To(ContainElement(corev1.ContainerPort{Name: "wrapper", ContainerPort: 9096, Protocol: corev1.ProtocolTCP}))
	g.Expect(etcdC.Args).To(ContainElement("--etcd-wrapper-port=9096"))
	g.Expect(etcdC.ReadinessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(9096)))
	g.Expect(etcdC.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(9096)))
	g.Expect(container(g, sts, "backup-restore").Args).To(ContainElement("--etcd-wrapper-port=9096"))
}
