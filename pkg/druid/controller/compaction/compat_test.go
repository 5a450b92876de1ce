package compaction

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
)

const upstreamImage = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1"

// The flags of `etcdbrctl compact` in gardener/etcd-backup-restore (cmd/options.go: restoration,
// snapstore and compactor configuration) that druid may render; --store-endpoint-override is upstream
// druid's own. No compression flags.
var upstreamCompactFlags = []string{
	"data-dir", "restoration-temp-snapshots-dir", "embedded-etcd-quota-bytes", "auto-compaction-mode", "auto-compaction-retention", "max-fetchers",
	"storage-provider", "store-container", "store-prefix", "store-endpoint-override", "max-parallel-chunk-uploads", "min-chunk-size", "snapstore-temp-directory",
	"defragment", "etcd-snapshot-timeout", "etcd-defrag-timeout", "full-snapshot-lease-name", "delta-snapshot-lease-name", "enable-snapshot-lease-renewal",
	"metrics-scrape-wait-duration",
}

func compressedEtcd() *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("bucket"),
		EndpointOverride: ptr.To("https://s3.example"), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
	etcd.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.CompressionPolicy("gzip"))}
	etcd.Spec.Backup.EtcdSnapshotTimeout = &metav1.Duration{Duration: 10 * time.Minute}
	etcd.Spec.Etcd.EtcdDefragTimeout = &metav1.Duration{Duration: 15 * time.Minute}
	etcd.Spec.Etcd.Quota = ptr.To(resource.MustParse("12Gi"))
	druidv1alpha1.SetDefaults(etcd)
	return etcd
}

// The exact `compact` arguments per image kind: neither gets compression flags (the upstream compact would
// refuse them; both compress like the snapshots they compact), the upstream one gets upstream druid's
// temporary directories, quota and auto-compaction.
func TestCompactArgsPerImageKind(t *testing.T) {
	g := NewWithT(t)
	etcd := compressedEtcd()
	common := []string{
		"compact",
		"--data-dir=/var/etcd/data/compaction.etcd",
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-main-full-snap",
		"--delta-snapshot-lease-name=etcd-main-delta-snap",
		"--storage-provider=S3",
		"--store-container=bucket",
		"--store-prefix=p",
		"--store-endpoint-override=https://s3.example",
	}
	timeouts := []string{"--etcd-snapshot-timeout=10m0s", "--etcd-defrag-timeout=15m0s"}
	g.Expect(CompactArgs(etcd, imagecaps.BackupRestoreOf(imagecaps.Ours))).To(HaveExactElements(
		append(append([]string{}, common...), timeouts...)))
	upstream := CompactArgs(etcd, imagecaps.BackupRestoreOf(imagecaps.Upstream))
	g.Expect(upstream).To(HaveExactElements(append(append(append([]string{}, common...), timeouts...),
		"--restoration-temp-snapshots-dir=/var/etcd/data/compaction.restoration.temp",
		"--snapstore-temp-directory=/var/etcd/data/tmp",
		"--embedded-etcd-quota-bytes=12884901888",
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=30m",
	)), "upstream:\n%s", strings.Join(upstream, "\n"))
	for _, a := range upstream[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		g.Expect(upstreamCompactFlags).To(ContainElement(name), "etcdbrctl compact defines no --%s", name)
	}
}

// The Job's image decides: druid's configured image or spec.backup.image, each judged by druid's setting.
func TestCompactionJobRendersForItsImage(t *testing.T) {
	g := NewWithT(t)
	cfg := config.CompactionController{BackupRestoreImage: "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"}
	etcd := compressedEtcd()

	image, caps := jobImageAndCaps(etcd, cfg)
	g.Expect(image).To(Equal(cfg.BackupRestoreImage))
	g.Expect(caps.Kind).To(Equal(imagecaps.Ours))
	job := newJob(etcd, jobInput{image: image, caps: caps, activeDeadline: time.Hour})
	g.Expect(job.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement(HavePrefix("--compress")))

	etcd.Spec.Backup.Image = ptr.To(upstreamImage)
	image, caps = jobImageAndCaps(etcd, cfg)
	g.Expect(image).To(Equal(upstreamImage))
	g.Expect(caps.Kind).To(Equal(imagecaps.Upstream))
	job = newJob(etcd, jobInput{image: image, caps: caps, activeDeadline: time.Hour})
	g.Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal(upstreamImage))
	g.Expect(job.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement(HavePrefix("--compress")))

	cfg.ImageCompatibility = imagecaps.Config{Mode: imagecaps.ModeOurs}
	_, caps = jobImageAndCaps(etcd, cfg)
	g.Expect(caps.Kind).To(Equal(imagecaps.Ours), "the operator's setting wins over the repository")
}
