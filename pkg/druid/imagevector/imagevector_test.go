package imagevector

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func writeVector(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "images_overwrite.yaml")
	NewWithT(t).Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

// Without an override the images are this project's, tagged with this build's version.
func TestDefaultIsThisBuildsImages(t *testing.T) {
	g := NewWithT(t)
	v, err := Load("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.Image(NameEtcdWrapper)).To(Equal("ghcr.io/gardener-etcd/etcd-wrapper:" + version.Get()))
	g.Expect(v.Image(NameBackupRestore)).To(Equal("ghcr.io/gardener-etcd/etcdbrctl:" + version.Get()))
}

// An override in Gardener's format (as gardenlet mounts it) replaces the entries it names, with Gardener's
// merge rules: a repository without a tag keeps the default tag, a digest tag becomes @digest, a ref wins,
// and entries restricted to a target version are not druid's.
func TestOverrideInGardenersFormat(t *testing.T) {
	g := NewWithT(t)
	v, err := Load(writeVector(t, `images:
- name: etcd-wrapper
  sourceRepository: github.com/gardener/etcd-wrapper
  resourceId: {name: etcd-wrapper}
  repository: registry.example/etcd-wrapper
- name: etcd-backup-restore
  repository: registry.example/etcdbrctl
  tag: "sha256:0123abcd"
- name: etcd-backup-restore
  targetVersion: ">= 1.30"
  repository: registry.example/not-this
  tag: v9
- name: alpine
  repository: registry.example/alpine
  tag: "3.21"
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.Image(NameEtcdWrapper)).To(Equal("registry.example/etcd-wrapper:" + version.Get()))
	g.Expect(v.Image(NameBackupRestore)).To(Equal("registry.example/etcdbrctl@sha256:0123abcd"))

	v, err = Load(writeVector(t, "images:\n- name: etcd-wrapper\n  ref: registry.example/w:v2@sha256:ff\n- name: etcd-wrapper\n  tag: v3\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.Image(NameEtcdWrapper)).To(Equal("registry.example/w:v2@sha256:ff"), "a tag alone keeps the ref before it")
}

// A broken override is an error naming the file and the entry, never a silent fall-back to the defaults.
func TestBrokenOverrideIsNamed(t *testing.T) {
	g := NewWithT(t)
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	g.Expect(err).To(MatchError(ContainSubstring(OverrideEnv)))
	path := writeVector(t, "images:\n- name: etcd-wrapper\n")
	_, err = Load(path)
	g.Expect(err).To(MatchError(ContainSubstring("images[0] (etcd-wrapper) needs ref, repository or tag")))
	_, err = Load(writeVector(t, "images:\n- repository: x\n"))
	g.Expect(err).To(MatchError(ContainSubstring("images[0].name must be set")))
}
