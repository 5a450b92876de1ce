package statefulset

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

const (
	upstreamBackupRestoreImage = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1"
	upstreamWrapperImage       = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcd-wrapper:v0.6.2"
)

var (
	upstreamCaps = imagecaps.Caps{BackupRestore: imagecaps.BackupRestoreOf(imagecaps.Upstream), EtcdWrapper: imagecaps.EtcdWrapperOf(imagecaps.Upstream)}
	oursCaps     = imagecaps.AllOurs
)

// fullEtcd sets everything that switches a flag: client TLS with a client certificate, sidecar TLS, an S3
// store with compression and an endpoint, a quota and a client port of its own.
func fullEtcd(customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	return newEtcd(append([]func(*druidv1alpha1.Etcd){func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client"},
		}
		e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcdbr"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcdbr-server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "etcdbr-client"},
		}
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--p--s/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			Container: ptr.To("bucket"), EndpointOverride: ptr.To("https://s3.example"), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
		e.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.CompressionPolicy("gzip"))}
		e.Spec.Etcd.Quota = ptr.To(resource.MustParse("12Gi"))
		e.Spec.Etcd.ClientPort = ptr.To(int32(2479))
	}}, customize...)...)
}

// flagNames are the names of the flags in args (the subcommand dropped).
func flagNames(args []string) []string {
	var names []string
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		names = append(names, name)
	}
	return names
}

// The flags of `etcdbrctl server` in gardener/etcd-backup-restore (pkg/types and cmd: server, etcd
// connection, snapstore, snapshotter, compression, restoration, lease, leader election and defragmentation
// flags) that druid may render, and of `etcd-wrapper start-etcd` in gardener/etcd-wrapper (cmd/etcd.go).
// --store-endpoint-override is the upstream druid's own (it passes spec.backup.store.endpointOverride).
var (
	upstreamServerFlags = []string{
		"server-port", "enable-profiling", "server-cert", "server-key",
		"endpoints", "service-endpoints", "insecure-transport", "insecure-skip-tls-verify", "cacert", "cert", "key",
		"etcd-connection-timeout", "etcd-snapshot-timeout", "etcd-defrag-timeout",
		"storage-provider", "store-container", "store-prefix", "store-endpoint-override", "max-parallel-chunk-uploads", "min-chunk-size", "snapstore-temp-directory",
		"schedule", "delta-snapshot-period", "delta-snapshot-memory-limit", "garbage-collection-policy", "max-backups", "garbage-collection-period", "delta-snapshot-retention-period",
		"compress-snapshots", "compression-policy",
		"data-dir", "restoration-temp-snapshots-dir", "embedded-etcd-quota-bytes", "auto-compaction-mode", "auto-compaction-retention",
		"enable-member-lease-renewal", "k8s-heartbeat-duration", "enable-snapshot-lease-renewal", "full-snapshot-lease-name", "delta-snapshot-lease-name",
		"reelection-period", "etcd-connection-timeout-leader-election", "defragmentation-schedule", "use-etcd-wrapper",
	}
	upstreamStartEtcdFlags = []string{
		"etcd-wrapper-port", "backup-restore-tls-enabled", "backup-restore-host-port", "backup-restore-ca-cert-bundle-path",
		"etcd-server-name", "etcd-client-port", "etcd-client-cert-path", "etcd-client-key-path", "etcd-ready-timeout",
	}
)

// Every flag druid renders for an upstream image is one that image defines; for our images the sidecar
// gets --server-cacert, which the upstream etcdbrctl would refuse as unknown.
func TestUpstreamImagesGetOnlyFlagsTheyDefine(t *testing.T) {
	g := NewWithT(t)
	for _, replicas := range []int32{1, 3} {
		etcd := fullEtcd(func(e *druidv1alpha1.Etcd) {
			e.Spec.Replicas = replicas
			e.Spec.Etcd.DefragmentationSchedule = ptr.To("0 0 * * *")
			e.Spec.Backup.DeltaSnapshotRetentionPeriod = &metav1.Duration{Duration: 24 * time.Hour}
		})
		for _, name := range flagNames(BackupRestoreArgs(etcd, upstreamCaps.BackupRestore)) {
			g.Expect(upstreamServerFlags).To(ContainElement(name), "etcdbrctl server defines no --%s", name)
		}
		for _, name := range flagNames(EtcdWrapperArgs(etcd, upstreamCaps)) {
			g.Expect(upstreamStartEtcdFlags).To(ContainElement(name), "etcd-wrapper start-etcd defines no --%s", name)
		}
		g.Expect(flagNames(BackupRestoreArgs(etcd, oursCaps.BackupRestore))).To(ContainElement("server-cacert"))
		g.Expect(upstreamServerFlags).NotTo(ContainElement("server-cacert"))
	}
}

// The exact arguments per image kind: ours keep what druid always rendered (no member rolls when druid is
// upgraded) but for the old etcd servers of our wrapper image (added once); the upstream sidecar loses
// --server-cacert and gets the upstream druid's settings of its defaults; the upstream wrapper gets the
// client port its readiness check dials.
func TestArgsPerImageKind(t *testing.T) {
	g := NewWithT(t)
	etcd := fullEtcd()
	common := []string{
		"server",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=10s",
		"--data-dir=/var/etcd/data/new.etcd",
		"--endpoints=https://etcd-events-local:2479",
		"--service-endpoints=https://etcd-events-client.ns.svc:2479",
		"--server-port=8080",
		"--insecure-transport=false",
	}
	tlsAndStore := []string{
		"--cacert=/var/etcd/ssl/ca/ca.crt",
		"--cert=/var/etcd/ssl/client/tls.crt",
		"--key=/var/etcd/ssl/client/tls.key",
		"--server-cert=/var/etcdbr/ssl/server/tls.crt",
		"--server-key=/var/etcdbr/ssl/server/tls.key",
	}
	store := []string{
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-events-full-snap",
		"--delta-snapshot-lease-name=etcd-events-delta-snap",
		"--storage-provider=S3",
		"--store-container=bucket",
		"--store-prefix=shoot--p--s/etcd-main",
		"--store-endpoint-override=https://s3.example",
	}
	brOurs := BackupRestoreArgs(etcd, oursCaps.BackupRestore)
	brUpstream := BackupRestoreArgs(etcd, upstreamCaps.BackupRestore)
	// fullEtcd leaves garbage collection unset: both kinds get the upstream druid's default, LimitBased
	// keeping 7.
	gc := []string{"--garbage-collection-policy=LimitBased", "--max-backups=7"}
	g.Expect(brOurs).To(HaveExactElements(concat(common, tlsAndStore, []string{"--server-cacert=/var/etcdbr/ssl/ca/ca.crt"}, store, []string{
		"--delta-snapshot-memory-limit=104857600"}, gc, []string{
		"--compress-snapshots=true", "--compression-policy=gzip",
	})), "ours:\n%s", strings.Join(brOurs, "\n"))
	g.Expect(brUpstream).To(HaveExactElements(concat(common, []string{"--insecure-skip-tls-verify=false"}, tlsAndStore,
		[]string{"--etcd-defrag-timeout=15m0s", "--etcd-snapshot-timeout=15m0s"}, store, []string{
			"--delta-snapshot-memory-limit=104857600"}, gc, []string{
			"--compress-snapshots=true", "--compression-policy=gzip",
			"--use-etcd-wrapper=true",
			"--restoration-temp-snapshots-dir=/var/etcd/data/restoration.temp",
			"--snapstore-temp-directory=/var/etcd/data/temp",
			"--embedded-etcd-quota-bytes=12884901888",
			"--auto-compaction-mode=periodic",
			"--auto-compaction-retention=30m",
		})), "upstream:\n%s", strings.Join(brUpstream, "\n"))

	wrapper := []string{
		"start-etcd",
		"--backup-restore-host-port=etcd-events-local:8080",
		"--etcd-server-name=etcd-events-local",
		"--etcd-wrapper-port=9095",
		"--etcd-client-cert-path=/var/etcd/ssl/client/tls.crt",
		"--etcd-client-key-path=/var/etcd/ssl/client/tls.key",
		"--backup-restore-tls-enabled=true",
		"--backup-restore-ca-cert-bundle-path=/var/etcdbr/ssl/ca/ca.crt",
	}
	steps := []string{
		"--step-etcd-3.5-binary=/usr/local/bin/etcd-3.5",
		"--step-etcd-3.6-binary=/usr/local/bin/etcd-3.6",
	}
	g.Expect(EtcdWrapperArgs(etcd, oursCaps)).To(HaveExactElements(concat(wrapper, steps)))
	// Our wrapper beside the upstream sidecar, whose restore opens only what etcd 3.5 and older write.
	g.Expect(EtcdWrapperArgs(etcd, imagecaps.Caps{BackupRestore: upstreamCaps.BackupRestore, EtcdWrapper: oursCaps.EtcdWrapper})).
		To(HaveExactElements(concat(wrapper, steps, []string{"--hold-etcd-version=3.5"})))
	g.Expect(EtcdWrapperArgs(etcd, upstreamCaps)).To(HaveExactElements(concat(wrapper, []string{"--etcd-client-port=2479"})))

	// Without client TLS the upstream sidecar's --insecure-skip-tls-verify stays unset: nothing to verify.
	plain := newEtcd()
	g.Expect(BackupRestoreArgs(plain, upstreamCaps.BackupRestore)).NotTo(ContainElement(HavePrefix("--insecure-skip-tls-verify")))
	g.Expect(BackupRestoreArgs(plain, oursCaps.BackupRestore)).NotTo(ContainElement(HavePrefix("--use-etcd-wrapper")))
}

// Probes per image kind: an upstream wrapper serves no /phase and an upstream sidecar no /livez, so neither
// gets a liveness probe; an upstream wrapper's /readyz is HTTPS once etcd's client TLS is on.
func TestProbesPerImageKind(t *testing.T) {
	for _, tc := range []struct {
		name          string
		images        config.Images
		etcdLiveness  bool
		sidecarLivez  bool
		readyzScheme  corev1.URIScheme
		wantBRKind    imagecaps.Kind
		wantEtcdKind  imagecaps.Kind
		forceUpstream bool
	}{
		{name: "ours", images: config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"},
			etcdLiveness: true, sidecarLivez: true, readyzScheme: corev1.URISchemeHTTP},
		{name: "upstream by repository", images: config.Images{EtcdWrapper: upstreamWrapperImage, BackupRestore: upstreamBackupRestoreImage},
			readyzScheme: corev1.URISchemeHTTPS},
		{name: "ours forced upstream", images: config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0",
			Compatibility: imagecaps.Config{Mode: imagecaps.ModeUpstream}}, readyzScheme: corev1.URISchemeHTTPS},
		{name: "upstream sidecar, our wrapper", images: config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: upstreamBackupRestoreImage},
			etcdLiveness: true, readyzScheme: corev1.URISchemeHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tmpl := podTemplate(fullEtcd(), renderInput{images: tc.images, configChecksum: "c"})
			etcdC, br := tmpl.Spec.Containers[0], tmpl.Spec.Containers[1]
			g.Expect(etcdC.LivenessProbe != nil).To(Equal(tc.etcdLiveness), "etcd liveness probe")
			g.Expect(br.LivenessProbe != nil).To(Equal(tc.sidecarLivez), "backup-restore liveness probe")
			g.Expect(etcdC.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
			g.Expect(etcdC.ReadinessProbe.HTTPGet.Scheme).To(Equal(tc.readyzScheme))
		})
	}
}

// Our images render the same pod template whatever the compatibility setting says about other images: a
// druid upgrade that brings the setting rolls no member that runs our images.
func TestOurImagesRenderTheSameUnderEverySetting(t *testing.T) {
	g := NewWithT(t)
	images := config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"}
	want, err := templateChecksum(podTemplate(fullEtcd(), renderInput{images: images, configChecksum: "c"}))
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range []imagecaps.Config{{Mode: imagecaps.ModeOurs}, {Mode: imagecaps.ModeAuto}, {Mode: imagecaps.ModeAuto, UpstreamRepositories: `^elsewhere/`}} {
		images.Compatibility = c
		got, _ := templateChecksum(podTemplate(fullEtcd(), renderInput{images: images, configChecksum: "c"}))
		g.Expect(got).To(Equal(want), "setting %+v", c)
	}
	images.Compatibility = imagecaps.Config{Mode: imagecaps.ModeUpstream}
	got, _ := templateChecksum(podTemplate(fullEtcd(), renderInput{images: images, configChecksum: "c"}))
	g.Expect(got).NotTo(Equal(want), "forcing upstream must change the rendering")
}

// spec.backup.image and spec.etcd.image are judged like druid's own images.
func TestAnEtcdsOwnImagesAreJudgedByTheirRepository(t *testing.T) {
	g := NewWithT(t)
	images := config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"}
	etcd := fullEtcd(func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Image = ptr.To(upstreamBackupRestoreImage) })
	br := podTemplate(etcd, renderInput{images: images}).Spec.Containers[1]
	g.Expect(br.Image).To(Equal(upstreamBackupRestoreImage))
	g.Expect(br.Args).NotTo(ContainElement(HavePrefix("--server-cacert")))
	g.Expect(br.Args).To(ContainElement("--use-etcd-wrapper=true"))
}

func TestCompatibilityNotices(t *testing.T) {
	g := NewWithT(t)
	reasons := func(ns []CompatibilityNotice) []string {
		var r []string
		for _, n := range ns {
			r = append(r, n.Reason)
		}
		return r
	}
	g.Expect(CompatibilityNotices(fullEtcd(), oursCaps)).To(BeEmpty())
	g.Expect(reasons(CompatibilityNotices(fullEtcd(), upstreamCaps))).To(HaveExactElements("NoSidecarClientVerification", "NoSidecarLivenessProbe", "NoWrapperLivenessProbe"))
	g.Expect(reasons(CompatibilityNotices(newEtcd(), upstreamCaps))).To(HaveExactElements("NoSidecarLivenessProbe", "NoWrapperLivenessProbe"), "without sidecar TLS no client verification is lost")
}

func concat(parts ...[]string) []string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// The upstream sidecar's GET /config writes the etcd configuration it serves to $HOME/etcd.conf.yaml
// (gardener/etcd-backup-restore pkg/server/httpAPI.go, serveConfig) before serving it; under our read-only
// root file system that write fails and every member's wrapper waits for a configuration that never comes.
// An upstream sidecar gets a writable home (an emptyDir at /home/nonroot, the home of uid 65532 in its
// distroless image); ours writes nothing there and renders as before.
func TestUpstreamSidecarGetsAWritableHome(t *testing.T) {
	g := NewWithT(t)
	homeMount := func(c corev1.Container) *corev1.VolumeMount {
		for i, m := range c.VolumeMounts {
			if m.MountPath == etcdpod.LocalHome {
				return &c.VolumeMounts[i]
			}
		}
		return nil
	}
	ours := config.Images{EtcdWrapper: "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0", BackupRestore: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"}
	upstream := config.Images{EtcdWrapper: ours.EtcdWrapper, BackupRestore: upstreamBackupRestoreImage}

	tmpl := podTemplate(fullEtcd(), renderInput{images: upstream, configChecksum: "c"})
	br := tmpl.Spec.Containers[1]
	g.Expect(*br.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue(), "the root file system stays read-only")
	mount := homeMount(br)
	g.Expect(mount).NotTo(BeNil(), "the upstream sidecar has no writable %s", etcdpod.LocalHome)
	g.Expect(mount.ReadOnly).To(BeFalse())
	g.Expect(tmpl.Spec.Volumes).To(ContainElement(And(HaveField("Name", mount.Name), HaveField("VolumeSource.EmptyDir", Not(BeNil())))))
	g.Expect(homeMount(tmpl.Spec.Containers[0])).To(BeNil(), "the wrapper does not get it")

	ourTmpl := podTemplate(fullEtcd(), renderInput{images: ours, configChecksum: "c"})
	g.Expect(homeMount(ourTmpl.Spec.Containers[1])).To(BeNil(), "our sidecar renders as before")
	g.Expect(ourTmpl.Spec.Volumes).NotTo(ContainElement(HaveField("Name", mount.Name)))
}
