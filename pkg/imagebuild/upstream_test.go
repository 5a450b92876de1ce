package imagebuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The upstream images carry the prebuilt binary at upstream's path as the entrypoint, run as 65532 in /
// like upstream's distroless images, on the shared root file system, and are tagged and labelled with the
// version the tools module pins, not the project's. The binaries here are stand-ins: the layout is under
// test, not upstream's code (test/upstream runs the real ones).
func TestUpstreamImagesAreUpstreamsLayoutAtThePinnedVersion(t *testing.T) {
	binDir := t.TempDir()
	want := map[string]struct{ binary, path, module string }{
		"upstream-etcd-druid":          {"upstream-etcd-druid", "/etcd-druid", "github.com/gardener/etcd-druid"},
		"upstream-etcd-backup-restore": {"upstream-etcdbrctl", "/etcdbrctl", "github.com/gardener/etcd-backup-restore"},
	}
	for _, w := range want {
		if err := os.WriteFile(filepath.Join(binDir, w.binary), []byte("stand-in for "+w.binary), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	images, err := Upstream("../..", binDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != len(want) {
		t.Fatalf("%d upstream images, want %d", len(images), len(want))
	}
	opts := testOptions()
	opts.Platforms = []v1.Platform{HostPlatform()}
	for _, bin := range images {
		w, ok := want[bin.Name]
		if !ok {
			t.Fatalf("unexpected upstream image %s", bin.Name)
		}
		pinned, err := PinnedVersion(filepath.Join("../../hack/tools", bin.Name), w.module)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(pinned, "v0.") || bin.Tag(opts) != pinned {
			t.Errorf("%s: tag %q, want the pinned version %q", bin.Name, bin.Tag(opts), pinned)
		}
		index, err := Build(context.Background(), opts, bin)
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		img, err := index.Image(manifest.Manifests[0].Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cfg.Config.Entrypoint, " "); got != w.path {
			t.Errorf("%s: entrypoint %q, want %q", bin.Name, got, w.path)
		}
		if cfg.Config.User != "65532:65532" || cfg.Config.WorkingDir != "/" {
			t.Errorf("%s: user %q in %q, want 65532:65532 in /", bin.Name, cfg.Config.User, cfg.Config.WorkingDir)
		}
		for key, want := range map[string]string{
			"org.opencontainers.image.version": pinned,
			"org.opencontainers.image.source":  "https://" + w.module,
		} {
			if got := cfg.Config.Labels[key]; got != want {
				t.Errorf("%s: label %s=%q, want %q", bin.Name, key, got, want)
			}
		}
		if rev, ok := cfg.Config.Labels["org.opencontainers.image.revision"]; ok {
			t.Errorf("%s: labelled with the project's revision %q", bin.Name, rev)
		}
		files := filesOf(t, img)
		checkRootFS(t, files)
		if got := files[w.path[1:]]; !bytes.Equal(got.data, []byte("stand-in for "+w.binary)) || got.mode&0o111 == 0 {
			t.Errorf("%s: %s holds %q (mode %o), want the prebuilt binary, executable", bin.Name, w.path, got.data, got.mode)
		}
	}
}

// A binary's path must be a file directly in /: the entrypoint of a nested or relative path would need
// directories the layer does not create.
func TestBinaryPathMustBeInRoot(t *testing.T) {
	for _, p := range []string{"etcd-druid", "/usr/bin/etcd-druid", "/a/../etcd-druid"} {
		bin := Binary{Name: "x", Prebuilt: "/nonexistent", Path: p}
		opts := Options{Platforms: []v1.Platform{HostPlatform()}}
		if _, err := Build(context.Background(), opts, bin); err == nil || !strings.Contains(err.Error(), "must be absolute") {
			t.Errorf("path %q: error %v, want one saying the path must be absolute, clean and in /", p, err)
		}
	}
}
