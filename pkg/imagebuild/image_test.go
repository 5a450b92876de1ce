package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testBinary = Binary{Name: "hello", Package: "./pkg/imagebuild/testdata/hello", Extras: []Extra{
	{Path: "/usr/local/bin/extra", ModuleDir: "pkg/imagebuild/testdata/extra", Package: "."},
}}

func testOptions() Options {
	return Options{ModuleDir: "../..", Version: "v1.2.3-4-gabcdef0", Revision: "abcdef0",
		Source: "https://example.com/gardener-etcd.git", Created: time.Unix(1764100000, 0)}
}

func TestBuildIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary for two platforms twice")
	}
	ctx := context.Background()
	first, err := Build(ctx, testOptions(), testBinary)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Build(ctx, testOptions(), testBinary)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := first.Digest()
	b, _ := second.Digest()
	if a != b {
		t.Fatalf("same source gave two digests: %s and %s", a, b)
	}
	other := testOptions()
	other.Version = "v9.9.9"
	third, err := Build(ctx, other, testBinary)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := third.Digest(); c == a {
		t.Fatalf("another version gave the same digest %s", c)
	}
	// The extras' layer is the same for another version and another commit time: a registry stores it once.
	other.Created = other.Created.Add(time.Hour)
	fourth, err := Build(ctx, other, testBinary)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := extrasLayerDigests(t, first), extrasLayerDigests(t, fourth); a != b {
		t.Fatalf("the extras' layers differ between versions: %s and %s", a, b)
	}
}

// extrasLayerDigests are the digests of the second layer (the extras) of each image of the index.
func extrasLayerDigests(t *testing.T, index v1.ImageIndex) string {
	t.Helper()
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, desc := range manifest.Manifests {
		img, err := index.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 3 {
			t.Fatalf("%s: %d layers, want 3 (root file system, extras, binary)", desc.Platform, len(layers))
		}
		d, err := layers[1].Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d.String())
	}
	return strings.Join(digests, " ")
}

func TestBuildMakesAHardenedMultiPlatformImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary for two platforms")
	}
	index, err := Build(context.Background(), testOptions(), testBinary)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := index.MediaType(); mt != types.OCIImageIndex {
		t.Fatalf("index media type %s, want %s", mt, types.OCIImageIndex)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	if len(manifest.Manifests) != len(wantMachine) {
		t.Fatalf("%d images in the index, want %d", len(manifest.Manifests), len(wantMachine))
	}
	for _, desc := range manifest.Manifests {
		arch := desc.Platform.Architecture
		img, err := index.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS != "linux" || cfg.Architecture != arch {
			t.Errorf("%s: config says %s/%s", arch, cfg.OS, cfg.Architecture)
		}
		if cfg.Config.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532", arch, cfg.Config.User)
		}
		if got := strings.Join(cfg.Config.Entrypoint, " "); got != "/hello" {
			t.Errorf("%s: entrypoint %q", arch, got)
		}
		for key, want := range map[string]string{
			"org.opencontainers.image.version":  "v1.2.3-4-gabcdef0",
			"org.opencontainers.image.revision": "abcdef0",
			"org.opencontainers.image.source":   "https://example.com/gardener-etcd",
		} {
			if got := cfg.Config.Labels[key]; got != want {
				t.Errorf("%s: label %s=%q, want %q", arch, key, got, want)
			}
		}
		if !cfg.Created.Equal(time.Unix(1764100000, 0)) {
			t.Errorf("%s: created %s", arch, cfg.Created)
		}
		files := filesOf(t, img)
		checkRootFS(t, files)
		for _, path := range []string{"hello", "usr/local/bin/extra"} {
			checkStaticBinary(t, arch, path, files[path], wantMachine[arch])
		}
		for _, dir := range []string{"usr", "usr/local", "usr/local/bin"} {
			if d, ok := files[dir]; !ok || d.mode != 0o755 {
				t.Errorf("%s: directory /%s missing or not 0755 (%o)", arch, dir, d.mode)
			}
		}
	}
}

// checkStaticBinary checks that f is an executable, statically linked ELF binary for machine.
func checkStaticBinary(t *testing.T, arch, path string, f file, machine elf.Machine) {
	t.Helper()
	if f.data == nil {
		t.Errorf("%s: no /%s in the image", arch, path)
		return
	}
	if f.mode&0o111 == 0 {
		t.Errorf("%s: /%s is not executable (mode %o)", arch, path, f.mode)
	}
	e, err := elf.NewFile(bytes.NewReader(f.data))
	if err != nil {
		t.Errorf("%s: /%s is no ELF binary: %v", arch, path, err)
		return
	}
	if e.Machine != machine {
		t.Errorf("%s: /%s is built for %s", arch, path, e.Machine)
	}
	if e.Section(".interp") != nil {
		t.Errorf("%s: /%s is dynamically linked", arch, path)
	}
}

// checkRootFS checks the files every image shares: the non-root user, a CA bundle Go can use, and the
// directories a read-only root filesystem needs.
func checkRootFS(t *testing.T, files map[string]file) {
	t.Helper()
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user:\n%s", files["etc/passwd"].data)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(files[CACertificatesPath[1:]].data) {
		t.Fatalf("%s holds no certificate", CACertificatesPath)
	}
	if n := strings.Count(string(files[CACertificatesPath[1:]].data), "BEGIN CERTIFICATE"); n < 100 {
		t.Errorf("%s holds %d certificates, want the NSS store (over 100)", CACertificatesPath, n)
	}
	if home := files[HomeDir[1:]]; home.uid != NonRootUID {
		t.Errorf("%s owned by %d, want %d", HomeDir, home.uid, NonRootUID)
	}
	if tmp := files["tmp"]; tmp.mode != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", tmp.mode)
	}
}

type file struct {
	mode int64
	uid  int
	data []byte
}

// filesOf reads the image's flattened file system, by path without the leading or (directories) trailing slash.
func filesOf(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = file{mode: hdr.Mode, uid: hdr.Uid, data: data}
	}
}
