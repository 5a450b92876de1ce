package statefulset

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

func newEtcd(customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-events", Namespace: "ns"}}
	e.Spec.Replicas = 3
	for _, c := range customize {
		c(e)
	}
	druidv1alpha1.SetDefaults(e)
	return e
}

func withPeerTLS(ca, server string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: ca}},
			ServerTLSSecretRef: corev1.SecretReference{Name: server},
		}}
	}
}

func TestPeerTLSVolumesUpToDate(t *testing.T) {
	g := NewWithT(t)
	plain := newEtcd()
	tls := newEtcd(withPeerTLS("ca-peer", "peer-server"))
	rotated := newEtcd(withPeerTLS("ca-peer-2", "peer-server"))

	g.Expect(PeerTLSVolumesUpToDate(volumes(plain, nil), plain)).To(BeTrue(), "nothing to mount without peer TLS")
	g.Expect(PeerTLSVolumesUpToDate(volumes(plain, nil), tls)).To(BeFalse(), "peer TLS newly enabled")
	g.Expect(PeerTLSVolumesUpToDate(volumes(tls, nil), tls)).To(BeTrue())
	g.Expect(PeerTLSVolumesUpToDate(volumes(tls, nil), rotated)).To(BeFalse(), "a different peer CA secret must roll the members first")
}

func TestSidecarArgsWithoutStoreHaveNoSnapshotFlags(t *testing.T) {
	g := NewWithT(t)
	args := BackupRestoreArgs(newEtcd(), imagecaps.AllOurs.BackupRestore)
	g.Expect(args).To(Equal([]string{
		"server",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=10s",
		"--data-dir=/var/etcd/data/new.etcd",
		"--endpoints=http://etcd-events-local:2379",
		"--service-endpoints=http://etcd-events-client.ns.svc:2379",
		"--server-port=8080",
		"--insecure-transport=true",
	}))
}

// TestSidecarArgsCarryTheSourceClientEndpoints: with spec.etcd.bootstrapWithExistingCluster the source's
// client endpoints follow the client Service in --service-endpoints, as upstream etcd-druid passes them, so
// that the sidecar can add its member to the source cluster.
func TestSidecarArgsCarryTheSourceClientEndpoints(t *testing.T) {
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
			Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0:2380"}}},
			ClientEndpoints: []string{"http://etcd-old-client.ns.svc:2379", "http://10.0.0.7:2379"},
		}
	})
	NewWithT(t).Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).To(ContainElement(
		"--service-endpoints=http://etcd-events-client.ns.svc:2379,http://etcd-old-client.ns.svc:2379,http://10.0.0.7:2379"))
}

// The sidecar's timeouts, leader election and profiling are passed as the upstream druid passes them, when
// the spec chose other than the defaults (TestSidecarArgsWithoutStoreHaveNoSnapshotFlags: none without).
func TestSidecarArgsCarryTheSpecsTimeoutsAndLeaderElection(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.EtcdDefragTimeout = &metav1.Duration{Duration: 20 * time.Minute}
		e.Spec.Backup.EtcdSnapshotTimeout = &metav1.Duration{Duration: 10 * time.Minute}
		e.Spec.Backup.LeaderElection = &druidv1alpha1.LeaderElectionSpec{
			ReelectionPeriod: &metav1.Duration{Duration: 7 * time.Second}, EtcdConnectionTimeout: &metav1.Duration{Duration: 3 * time.Second}}
		e.Spec.Backup.EnableProfiling = ptr.To(true)
	})
	g.Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).To(ContainElements("--etcd-defrag-timeout=20m0s", "--etcd-snapshot-timeout=10m0s",
		"--reelection-period=7s", "--etcd-connection-timeout-leader-election=3s", "--enable-profiling=true"))
	e.Spec.Backup.EnableProfiling = ptr.To(false)
	g.Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).NotTo(ContainElement(HavePrefix("--enable-profiling")))

	// Our sidecar's defaults render nothing (an Etcd that states them keeps its pod template); the upstream
	// sidecar gets the timeouts always, as the upstream druid passes them (its own defragmentation default
	// is 8m).
	atDefaults := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.LeaderElection = &druidv1alpha1.LeaderElectionSpec{
			ReelectionPeriod: &metav1.Duration{Duration: 5 * time.Second}, EtcdConnectionTimeout: &metav1.Duration{Duration: 5 * time.Second}}
	})
	ours := BackupRestoreArgs(atDefaults, imagecaps.AllOurs.BackupRestore)
	for _, flag := range []string{"--etcd-defrag-timeout", "--etcd-snapshot-timeout", "--reelection-period", "--etcd-connection-timeout-leader-election"} {
		g.Expect(ours).NotTo(ContainElement(HavePrefix(flag)), "our sidecar's default %s renders no flag", flag)
	}
	g.Expect(BackupRestoreArgs(atDefaults, imagecaps.BackupRestoreOf(imagecaps.Upstream))).To(ContainElements(
		"--etcd-defrag-timeout=15m0s", "--etcd-snapshot-timeout=15m0s", "--reelection-period=5s", "--etcd-connection-timeout-leader-election=5s"))
}

func TestProviderAliasesAreCanonicalized(t *testing.T) {
	g := NewWithT(t)
	for alias, canonical := range map[druidv1alpha1.StorageProvider]string{
		"aws": "S3", "S3": "S3", "azure": "ABS", "gcp": "GCS", "openstack": "Swift", "alicloud": "OSS", "dell": "ECS", "openshift": "OCS", "Local": "Local",
	} {
		e := newEtcd(func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(alias)}
		})
		g.Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).To(ContainElement("--storage-provider="+canonical), "alias %s", alias)
	}
}

// The GCS secret is mounted at upstream druid's /var/.gcp, where a Gardener workload-identity configuration
// expects its token file; the variable names serviceaccount.json there.
func TestGCSCredentialsPointAtTheServiceAccountFile(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderGCP), SecretRef: &corev1.SecretReference{Name: "b"}}
	})
	c := backupRestoreContainer(e, "img", imagecaps.AllOurs.BackupRestore, nil)
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: "/var/.gcp/serviceaccount.json"}))
	g.Expect(c.VolumeMounts).To(ContainElement(HaveField("MountPath", "/var/.gcp")))
}

// ECS gets its secret's keys as variables of their own, as the upstream druid passes them (the upstream
// sidecar reads no directory for ECS); the optional ones stay unset when the key is absent.
func TestECSCredentialsAreVariablesFromTheSecret(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderDell), SecretRef: &corev1.SecretReference{Name: "b"}}
	})
	fromSecret := func(env, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "b"}, Key: key, Optional: ptr.To(optional)}}}
	}
	c := backupRestoreContainer(e, "img", imagecaps.AllOurs.BackupRestore, nil)
	g.Expect(c.Env).To(ContainElements(
		fromSecret("ECS_ENDPOINT", "endpoint", false),
		fromSecret("ECS_ACCESS_KEY_ID", "accessKeyID", false),
		fromSecret("ECS_SECRET_ACCESS_KEY", "secretAccessKey", false),
		fromSecret("ECS_DISABLE_SSL", "disableSSL", true),
		fromSecret("ECS_INSECURE_SKIP_VERIFY", "insecureSkipVerify", true),
	))
	for _, v := range c.Env {
		g.Expect(v.Name).NotTo(HaveSuffix("_APPLICATION_CREDENTIALS"))
	}
}

func TestExponentialGCPassesNoMaxBackups(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
		e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential)
	})
	args := BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)
	g.Expect(args).To(ContainElement("--garbage-collection-policy=Exponential"))
	g.Expect(args).NotTo(ContainElement(HavePrefix("--max-backups")))
}

func TestTemplateChecksumFollowsTheSpec(t *testing.T) {
	g := NewWithT(t)
	in := renderInput{images: config.Images{EtcdWrapper: "e", BackupRestore: "b"}, configChecksum: "c"}
	a, err := templateChecksum(podTemplate(newEtcd(), in))
	g.Expect(err).NotTo(HaveOccurred())
	again, _ := templateChecksum(podTemplate(newEtcd(), in))
	g.Expect(again).To(Equal(a))
	other, _ := templateChecksum(podTemplate(newEtcd(func(e *druidv1alpha1.Etcd) { e.Spec.RunAsRoot = ptr.To(true) }), in))
	g.Expect(other).NotTo(Equal(a))
	in.images.EtcdWrapper = "e2"
	newImage, _ := templateChecksum(podTemplate(newEtcd(), in))
	g.Expect(newImage).NotTo(Equal(a), "a new druid image must roll the pods")
}

// TestPodsAreHardened: both containers run without privilege escalation or capabilities on a read-only root
// file system with a writable /tmp, under the runtime's seccomp profile; spec.runAsRoot keeps only the
// seccomp profile.
func TestPodsAreHardened(t *testing.T) {
	g := NewWithT(t)
	in := renderInput{images: config.Images{EtcdWrapper: "e", BackupRestore: "b"}, configChecksum: "c"}
	spec := podTemplate(newEtcd(), in).Spec
	g.Expect(spec.SecurityContext.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))
	g.Expect(*spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(spec.Volumes).To(ContainElement(corev1.Volume{Name: volumeTmp, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}))
	g.Expect(spec.Containers).To(HaveLen(2))
	for _, c := range spec.Containers {
		sc := c.SecurityContext
		g.Expect(sc).NotTo(BeNil(), c.Name)
		g.Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue(), c.Name)
		g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse(), c.Name)
		g.Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}), c.Name)
		g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: volumeTmp, MountPath: "/tmp"}), c.Name)
	}
	root := podTemplate(newEtcd(func(e *druidv1alpha1.Etcd) { e.Spec.RunAsRoot = ptr.To(true) }), in).Spec
	g.Expect(root.SecurityContext.RunAsNonRoot).To(BeNil())
	g.Expect(root.SecurityContext.SeccompProfile).NotTo(BeNil())
	g.Expect(root.Containers[0].SecurityContext).To(BeNil())
}

func TestProbesOnBothContainers(t *testing.T) {
	withBackupTLS := func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcdbr"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcdbr-server"},
		}
	}
	for _, tc := range []struct {
		name               string
		replicas           int32
		tls                bool
		etcdReadinessPath  string
		etcdReadinessPort  int32
		etcdReadinessHTTPS bool
		sidecarScheme      corev1.URIScheme
	}{
		{name: "multi-member", replicas: 3, etcdReadinessPath: "/readyz", etcdReadinessPort: 9095, sidecarScheme: corev1.URISchemeHTTP},
		{name: "single member", replicas: 1, etcdReadinessPath: "/healthz", etcdReadinessPort: 8080, sidecarScheme: corev1.URISchemeHTTP},
		{name: "single member, sidecar TLS", replicas: 1, tls: true, etcdReadinessPath: "/healthz", etcdReadinessPort: 8080, etcdReadinessHTTPS: true, sidecarScheme: corev1.URISchemeHTTPS},
		{name: "multi-member, sidecar TLS", replicas: 3, tls: true, etcdReadinessPath: "/readyz", etcdReadinessPort: 9095, sidecarScheme: corev1.URISchemeHTTPS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := newEtcd(func(e *druidv1alpha1.Etcd) {
				e.Spec.Replicas = tc.replicas
				if tc.tls {
					withBackupTLS(e)
				}
			})
			tmpl := podTemplate(etcd, renderInput{})
			etcdC, br := tmpl.Spec.Containers[0], tmpl.Spec.Containers[1]

			g.Expect(etcdC.ReadinessProbe.HTTPGet.Path).To(Equal(tc.etcdReadinessPath))
			g.Expect(etcdC.ReadinessProbe.HTTPGet.Port.IntVal).To(Equal(tc.etcdReadinessPort))
			g.Expect(etcdC.ReadinessProbe.HTTPGet.Scheme == corev1.URISchemeHTTPS).To(Equal(tc.etcdReadinessHTTPS))

			// The wrapper port accepts plain HTTP whatever TLS the Etcd has; /phase answers from the start.
			g.Expect(*etcdC.LivenessProbe.HTTPGet).To(Equal(corev1.HTTPGetAction{Path: "/phase", Port: intstr.FromInt32(9095), Scheme: corev1.URISchemeHTTP}))

			// No readiness of its own: a broken sidecar must not take a serving member out of the client Service.
			g.Expect(br.ReadinessProbe).To(BeNil())
			g.Expect(*br.LivenessProbe.HTTPGet).To(Equal(corev1.HTTPGetAction{Path: "/livez", Port: intstr.FromInt32(8080), Scheme: tc.sidecarScheme}))

			for _, c := range []corev1.Container{etcdC, br} {
				p := c.LivenessProbe
				// A hung process is restarted only after a full minute without any answer.
				g.Expect(p.PeriodSeconds*p.FailureThreshold).To(BeNumerically(">=", 60), c.Name)
				g.Expect(p.TimeoutSeconds).To(BeNumerically(">=", 5), c.Name)
				g.Expect(p.SuccessThreshold).To(Equal(int32(1)), c.Name)
			}
			g.Expect(etcdC.ReadinessProbe.SuccessThreshold).To(Equal(int32(1)))
			// Ready within a second of serving, from the container's first second on: a replaced member
			// serves again as soon as its etcd does.
			g.Expect(etcdC.ReadinessProbe.InitialDelaySeconds).To(BeNumerically("<=", 1))
			g.Expect(etcdC.ReadinessProbe.PeriodSeconds).To(Equal(int32(1)))
			// Out of the client Service only after 25 s without an answer, as with upstream's probe (5 × 5 s):
			// a member that is busy for a moment keeps its clients.
			g.Expect(etcdC.ReadinessProbe.PeriodSeconds * etcdC.ReadinessProbe.FailureThreshold).To(BeNumerically(">=", 25))
		})
	}
}

// The sidecar asks the wrapper for its phase and restarts etcd through it: with spec.etcd.wrapperPort other
// than 9095 (Gardener's etcd-events as a static pod uses 9096) our sidecar is told the port; at 9095 the
// flag is left out, so pods rendered before keep their template and no member rolls. The upstream sidecar
// has no such flag (it dials 9095 fixed).
func TestSidecarGetsTheWrapperPort(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd()
	g.Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).NotTo(ContainElement(HavePrefix("--etcd-wrapper-port")))
	e.Spec.Etcd.WrapperPort = ptr.To(int32(9096))
	g.Expect(BackupRestoreArgs(e, imagecaps.AllOurs.BackupRestore)).To(ContainElement("--etcd-wrapper-port=9096"))
	g.Expect(EtcdWrapperArgs(e, imagecaps.AllOurs)).To(ContainElement("--etcd-wrapper-port=9096"), "the wrapper listens there")
	g.Expect(BackupRestoreArgs(e, imagecaps.BackupRestoreOf(imagecaps.Upstream))).NotTo(ContainElement(HavePrefix("--etcd-wrapper-port")))
}
