package imagebuild

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// StepEtcdExtras are the etcd 3.5 and 3.6 servers the etcd-wrapper image carries: the wrapper runs etcd 3.7
// in-process and steps data that etcd 3.4 or 3.5 wrote through them first (docs/design.md,
// "etcd version stepping"). They are built from the modules `make tools` builds bin/etcd-3.5 and
// bin/etcd-3.6 from, so the tests and the image run the same pinned versions.
var StepEtcdExtras = []Extra{
	{Path: etcdpod.StepEtcd35BinaryPath, ModuleDir: "hack/tools/etcd-3.5", Package: "."},
	{Path: etcdpod.StepEtcd36BinaryPath, ModuleDir: "hack/tools/etcd-3.6", Package: "."},
}

// extrasLayer builds the extras for the platform into one layer. Its entries carry the epoch, not the
// build's time, so that the layer is the same for every commit that leaves the modules and the toolchain
// alone.
func extrasLayer(ctx context.Context, moduleDir string, extras []Extra, platform v1.Platform) (v1.Layer, error) {
	var entries []entry
	dirs := map[string]bool{}
	for _, x := range extras {
		if !path.IsAbs(x.Path) || path.Clean(x.Path) != x.Path {
			return nil, fmt.Errorf("extra %s: the path must be absolute and clean", x.Path)
		}
		binary, err := goBuild(ctx, filepath.Join(moduleDir, x.ModuleDir), x.Package, strippedLDFlags, false, platform)
		if err != nil {
			return nil, fmt.Errorf("extra %s: %w", x.Path, err)
		}
		entries = append(entries, parentDirs(x.Path[1:], dirs)...)
		entries = append(entries, entry{path: x.Path[1:], mode: 0o755, data: binary})
	}
	return layerOf(entries, epoch)
}

// parentDirs are the directory entries of p's parents not in seen yet, outermost first (a tar should
// create a directory before what it holds).
func parentDirs(p string, seen map[string]bool) []entry {
	var dirs []entry
	for i := range len(p) {
		if p[i] != '/' || seen[p[:i+1]] {
			continue
		}
		seen[p[:i+1]] = true
		dirs = append(dirs, entry{path: p[:i+1], mode: 0o755})
	}
	return dirs
}

// extraPaths names the extras in the image's history.
func extraPaths(extras []Extra) string {
	paths := make([]string, len(extras))
	for i, x := range extras {
		paths[i] = x.Path
	}
	return strings.Join(paths, " ")
}
