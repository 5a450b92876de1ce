package localseed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// seedImages are the images the seed itself runs on its nodes, built by the project: the sandbox image from
// cmd/pause, and CoreDNS as `make tools` built it from its pinned module (hack/tools/coredns).
func (s *Seed) seedImages() []imagebuild.Binary {
	return []imagebuild.Binary{
		{Name: "pause", Package: "./cmd/pause"},
		{Name: "coredns", Prebuilt: filepath.Join(s.opts.BinDir, "coredns")},
	}
}

// PushImage builds bin from the module at moduleDir for the host's platform and pushes it to the seed's
// registry as localseed/<name>; it returns the reference by digest that pods should use.
func (s *Seed) PushImage(ctx context.Context, moduleDir string, bin imagebuild.Binary) (string, error) {
	opts := imagebuild.Options{ModuleDir: moduleDir, Version: version.Get(),
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}}
	index, err := imagebuild.Build(ctx, opts, bin)
	if err != nil {
		return "", err
	}
	ref, err := imagebuild.Push(ctx, index, fmt.Sprintf("%s/localseed/%s:%s", s.Registry(), bin.Name, opts.Version), true)
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

// PushProjectImages pushes the project's images as `make images` wrote them (one OCI layout per image
// under layoutDir, bin/images) to the seed's registry as gardener-etcd/<name>:<tag>, so that the seed runs
// the very artifacts a real seed would; Images then names them by digest.
func (s *Seed) PushProjectImages(ctx context.Context, layoutDir string) error {
	for _, bin := range imagebuild.Project {
		index, tag, err := imagebuild.ReadLayout(filepath.Join(layoutDir, bin.Name))
		if err != nil {
			return err
		}
		ref, err := imagebuild.Push(ctx, index, fmt.Sprintf("%s/gardener-etcd/%s:%s", s.Registry(), bin.Name, tag), true)
		if err != nil {
			return err
		}
		s.images[bin.Name] = ref.String()
	}
	return nil
}

// UpstreamImages are the images of upstream's released components (imagebuild.Upstream, written by `make
// images-upstream` or seedworkflow.BuildBinDir) with the repository below the seed's registry each is pushed
// to: upstream's own path (as in europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl), so that
// the seed's registry stands for a mirror of upstream's, and the references tell upstream's images from ours
// (gardener-etcd/<name>).
var UpstreamImages = map[string]string{
	"upstream-etcd-druid":          "gardener/etcd-druid",
	"upstream-etcd-backup-restore": "gardener/etcdbrctl",
}

// PushUpstreamImages pushes the images of UpstreamImages whose OCI layouts exist under layoutDir to the
// seed's registry; Images then names them by digest under their image names. A missing layout is not an
// error (upstream's binaries are built by `make tools-upstream` only, not by `make tools`): the names of the
// pushed images are returned, and the tests that need one skip without it.
func (s *Seed) PushUpstreamImages(ctx context.Context, layoutDir string) ([]string, error) {
	var pushed []string
	for _, name := range slices.Sorted(maps.Keys(UpstreamImages)) {
		dir := filepath.Join(layoutDir, name)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		index, tag, err := imagebuild.ReadLayout(dir)
		if err != nil {
			return pushed, err
		}
		ref, err := imagebuild.Push(ctx, index, fmt.Sprintf("%s/%s:%s", s.Registry(), UpstreamImages[name], tag), true)
		if err != nil {
			return pushed, err
		}
		s.images[name] = ref.String()
		pushed = append(pushed, name)
	}
	return pushed, nil
}

// Images are the references by digest of the images pushed with PushProjectImages (etcd-druid, etcdbrctl,
// etcd-wrapper, gardener-extension-backup) and PushUpstreamImages (upstream-etcd-druid,
// upstream-etcd-backup-restore), by image name; nil before PushProjectImages.
func (s *Seed) Images() map[string]string {
	if len(s.images) == 0 {
		return nil
	}
	return maps.Clone(s.images)
}

// pushSeedImages builds and pushes the sandbox and CoreDNS images.
func (s *Seed) pushSeedImages(ctx context.Context) (map[string]string, error) {
	refs := map[string]string{}
	for _, bin := range s.seedImages() {
		ref, err := s.PushImage(ctx, s.opts.SourceDir, bin)
		if err != nil {
			return nil, fmt.Errorf("seed image %s: %w", bin.Name, err)
		}
		refs[bin.Name] = ref
	}
	return refs, nil
}
