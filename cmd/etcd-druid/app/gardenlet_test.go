package app

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagevector"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// gardenletConfig is the OperatorConfiguration gardenlet renders for etcd-druid (a copy of Gardener's own
// test expectation, see the file's header).
var gardenletConfig = filepath.Join("testdata", "gardenlet-operatorconfiguration.yaml")

// resolveGardenlet resolves the configuration as druid's command does under gardenlet's Deployment: only
// --config, and IMAGEVECTOR_OVERWRITE (overwrite; "" when unset), plus extra flags.
func resolveGardenlet(t *testing.T, overwrite string, args ...string) (Config, error) {
	t.Helper()
	cmd := NewCommand()
	NewWithT(t).Expect(cmd.ParseFlags(append([]string{"--config=" + gardenletConfig}, args...))).To(Succeed())
	return ResolveConfig(cmd.Flags(), gardenletConfig, overwrite)
}

// Gardenlet's Deployment gives druid no image at all: the built-in image vector supplies this build's
// images, so druid starts instead of refusing its configuration.
func TestGardenletDeploymentStartsWithBuiltInImages(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolveGardenlet(t, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed())
	g.Expect(cfg.Etcd.Images.EtcdWrapper).To(Equal(imagevector.DefaultRegistry + "/etcd-wrapper:" + version.Get()))
	g.Expect(cfg.Etcd.Images.BackupRestore).To(Equal(imagevector.DefaultRegistry + "/etcdbrctl:" + version.Get()))
	g.Expect(cfg.Compaction.BackupRestoreImage).To(Equal(cfg.Etcd.Images.BackupRestore), "the Jobs run the same etcdbrctl")
	g.Expect(cfg.CopyBackupsTask.BackupRestoreImage).To(Equal(cfg.Etcd.Images.BackupRestore))
}

// IMAGEVECTOR_OVERWRITE, in Gardener's format under upstream druid's entry names, chooses the images; a
// flag still wins over it.
func TestGardenletImageVectorOverwrite(t *testing.T) {
	g := NewWithT(t)
	overwrite := writeFile(t, `images:
- name: etcd-wrapper
  repository: registry.example/etcd-wrapper
  tag: v0.9.0
- name: etcd-backup-restore
  repository: registry.example/etcdbrctl
  tag: v0.50.0
`)
	cfg, err := resolveGardenlet(t, overwrite)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed())
	g.Expect(cfg.Etcd.Images.EtcdWrapper).To(Equal("registry.example/etcd-wrapper:v0.9.0"))
	g.Expect(cfg.Etcd.Images.BackupRestore).To(Equal("registry.example/etcdbrctl:v0.50.0"))

	cfg, err = resolveGardenlet(t, overwrite, "--backup-restore-image=flag/etcdbrctl:v1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Etcd.Images.BackupRestore).To(Equal("flag/etcdbrctl:v1"), "a flag wins over the image vector")
	g.Expect(cfg.Etcd.Images.EtcdWrapper).To(Equal("registry.example/etcd-wrapper:v0.9.0"))

	_, err = resolveGardenlet(t, filepath.Join(t.TempDir(), "absent.yaml"))
	g.Expect(err).To(MatchError(ContainSubstring(imagevector.OverrideEnv)), "a broken overwrite stops druid, naming it")
}

// Gardenlet's webhook configuration calls both its webhooks (components and StatefulSet scale) on
// upstream druid's path; druid serves the component protection there.
func TestGardenletWebhookPathServed(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolveGardenlet(t, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(registeredPaths(t, cfg, protection.UpstreamPath, protection.Path)).To(Equal(map[string]bool{
		protection.UpstreamPath: true, protection.Path: true,
	}))
}
