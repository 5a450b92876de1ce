package localseed

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// seedImages are the images the seed itself runs on its nodes, built by the project: the sandbox image and
// CoreDNS (from the pinned module in hack/tools/coredns).
var seedImages = map[string]imagebuild.Binary{
	"pause":   {Name: "pause", Package: "./cmd/pause"},
	"coredns": {Name: "coredns", Package: "github.com/coredns/coredns"},
}

// seedImageModules says which module each seed image's package is built in, relative to the source tree.
var seedImageModules = map[string]string{"pause": ".", "coredns": "hack/tools/coredns"}

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

// pushSeedImages builds and pushes the sandbox and CoreDNS images.
func (s *Seed) pushSeedImages(ctx context.Context) (map[string]string, error) {
	refs := map[string]string{}
	for name, bin := range seedImages {
		ref, err := s.PushImage(ctx, filepath.Join(s.opts.SourceDir, seedImageModules[name]), bin)
		if err != nil {
			return nil, fmt.Errorf("seed image %s: %w", name, err)
		}
		refs[name] = ref
	}
	return refs, nil
}
