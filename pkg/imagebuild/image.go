package imagebuild

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// DefaultPlatforms are the platforms every image is built for.
var DefaultPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Binary is one image: a main package of the module, named like its command.
type Binary struct {
	// Name is the image's name and the binary's path in it (/<Name>), its entrypoint.
	Name string
	// Package is the main package, e.g. "./cmd/etcd-druid".
	Package string
	// Prebuilt, when set, is a static binary for the host's platform to use instead of building Package
	// (e.g. a tool `make tools` already built from its pinned module); Options.Platforms must then be the
	// host's only.
	Prebuilt string
	// Extras are further binaries the image carries, in a layer of their own below the image's binary.
	Extras []Extra
	// Path is the binary's absolute path in the image, its entrypoint; /<Name> when empty. An image of
	// another project's binary keeps that project's path (Upstream).
	Path string
	// WorkingDir is the image's working directory; HomeDir when empty.
	WorkingDir string
	// Version and Source, when Version is set, label the image instead of Options.Version, Revision and
	// Source: a prebuilt binary of another project carries that project's version stamp.
	Version string
	Source  string
}

// path is the binary's absolute path in the image.
func (b Binary) path() string {
	if b.Path != "" {
		return b.Path
	}
	return "/" + b.Name
}

// workingDir is the image's working directory.
func (b Binary) workingDir() string {
	if b.WorkingDir != "" {
		return b.WorkingDir
	}
	return HomeDir
}

// labelled are the options an image is labelled with: the project's, or the other project's version and
// repository.
func (b Binary) labelled(opts Options) Options {
	if b.Version != "" {
		return Options{Version: b.Version, Source: b.Source}
	}
	return opts
}

// Tag is the tag the image is written and pushed with: its own version, else the project's.
func (b Binary) Tag(opts Options) string {
	if b.Version != "" {
		return b.Version
	}
	return opts.Version
}

// Extra is a binary built from a module of its own (e.g. one of hack/tools, which pins a version of a
// program this module cannot link beside its own, like an older etcd server), for the same platforms as
// the image. It is built like the image's binary but without a version stamp and without VCS stamp, so
// that its layer depends only on the pinned module and the toolchain and stays the same across commits
// (registries and nodes store it once).
type Extra struct {
	// Path is the binary's absolute path in the image.
	Path string
	// ModuleDir is the module's directory, relative to Options.ModuleDir.
	ModuleDir string
	// Package is the main package within that module, e.g. ".".
	Package string
}

// Options say what to build and how to label it.
type Options struct {
	// ModuleDir is the root of the module the packages belong to.
	ModuleDir string
	// Version is the image tag and the binaries' pkg/version stamp (`git describe`).
	Version string
	// Revision is the commit the source is at (label org.opencontainers.image.revision).
	Revision string
	// Source is the repository URL (label org.opencontainers.image.source).
	Source string
	// Created is the time of every file and of the image config: the commit time for reproducible builds.
	// The zero time means the Unix epoch.
	Created time.Time
	// Platforms default to DefaultPlatforms.
	Platforms []v1.Platform
}

// VersionVariable is the linker symbol the binaries report their version from.
const VersionVariable = "github.com/gardener-etcd/gardener-etcd/pkg/version.Version"

// Build compiles the binary for every platform and returns the OCI image index of its images.
func Build(ctx context.Context, opts Options, bin Binary) (v1.ImageIndex, error) {
	created := opts.Created
	if created.IsZero() {
		created = epoch
	}
	created = created.UTC().Truncate(time.Second)
	platforms := opts.Platforms
	if len(platforms) == 0 {
		platforms = DefaultPlatforms
	}
	if p := bin.path(); !path.IsAbs(p) || path.Clean(p) != p || path.Dir(p) != "/" {
		return nil, fmt.Errorf("image %s: the binary's path %q must be absolute, clean and in /", bin.Name, p)
	}
	base, err := layerOf(rootfsEntries(), created)
	if err != nil {
		return nil, fmt.Errorf("root file system layer: %w", err)
	}
	ldflags := strippedLDFlags + " -X " + VersionVariable + "=" + opts.Version
	stamp := v1.Time{Time: created}
	index := emptyOCIIndex()
	for _, platform := range platforms {
		layers := []mutate.Addendum{{Layer: base, History: v1.History{Created: stamp, CreatedBy: "gardener-etcd imagebuild: root file system"}}}
		if len(bin.Extras) > 0 {
			extras, err := extrasLayer(ctx, opts.ModuleDir, bin.Extras, platform)
			if err != nil {
				return nil, err
			}
			layers = append(layers, mutate.Addendum{Layer: extras, History: v1.History{Created: stamp, CreatedBy: "gardener-etcd imagebuild: " + extraPaths(bin.Extras)}})
		}
		binary, err := binaryFor(ctx, opts.ModuleDir, bin, ldflags, platform)
		if err != nil {
			return nil, err
		}
		top, err := layerOf(binaryEntries(bin.path()[1:], binary), created)
		if err != nil {
			return nil, err
		}
		layers = append(layers, mutate.Addendum{Layer: top, History: v1.History{Created: stamp, CreatedBy: "gardener-etcd imagebuild: " + bin.path()}})
		img, err := imageOf(bin, layers, platform, created, opts)
		if err != nil {
			return nil, fmt.Errorf("image %s for %s: %w", bin.Name, platform.String(), err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add: img, Descriptor: v1.Descriptor{Platform: &platform},
		})
	}
	return index, nil
}

// imageOf assembles one platform's image from its layers (the shared root file system first, the binary
// last) and a config that runs the binary as the non-root user.
func imageOf(bin Binary, layers []mutate.Addendum, platform v1.Platform, created time.Time, opts Options) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	stamp := v1.Time{Time: created}
	img, err := mutate.Append(img, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = stamp
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Config = v1.Config{
		Entrypoint: []string{bin.path()},
		User:       fmt.Sprintf("%d:%d", NonRootUID, NonRootUID),
		WorkingDir: bin.workingDir(),
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"HOME=" + HomeDir,
			"SSL_CERT_FILE=" + CACertificatesPath,
		},
		Labels: Labels(bin.Name, bin.labelled(opts)),
	}
	return mutate.ConfigFile(img, cfg)
}

// Project are the images of this project.
var Project = []Binary{
	{Name: "etcd-druid", Package: "./cmd/etcd-druid"},
	{Name: "etcdbrctl", Package: "./cmd/etcdbrctl"},
	{Name: "etcd-wrapper", Package: "./cmd/etcd-wrapper", Extras: StepEtcdExtras},
	{Name: "gardener-extension-backup", Package: "./cmd/gardener-extension-backup"},
}

// emptyOCIIndex is an image index of OCI media type with nothing in it.
func emptyOCIIndex() v1.ImageIndex {
	return mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
}

// Labels are the OCI annotations of an image's config (org.opencontainers.image.*).
func Labels(name string, opts Options) map[string]string {
	labels := map[string]string{
		"org.opencontainers.image.title":   name,
		"org.opencontainers.image.version": opts.Version,
	}
	if opts.Revision != "" {
		labels["org.opencontainers.image.revision"] = opts.Revision
	}
	if opts.Source != "" {
		labels["org.opencontainers.image.source"] = strings.TrimSuffix(opts.Source, ".git")
	}
	return labels
}
