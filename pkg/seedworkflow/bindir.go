package seedworkflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// ErrToolsMissing is wrapped by BuildBinDir when a binary of `make tools` is missing: suites skip rather
// than fail on a machine that has not built them.
var ErrToolsMissing = errors.New("tools missing (make tools)")

// seedTools are the control-plane and S3 binaries the local seed runs from its bin directory, and the nodes'
// NetworkPolicy agent (those of the nodes, the registry and CoreDNS are localseed.NodeTools).
var seedTools = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "versitygw", kubeletnode.NetworkPolicyAgent}

// BuildBinDir links the tools of `make tools` the local seed runs into dir and writes the project's images,
// built from this checkout for the host's platform (the etcd-wrapper image with the old etcd servers of
// hack/tools, imagebuild.StepEtcdExtras), as OCI layouts into <dir>/images, where StartSeed pushes them
// from; so a test seed runs the code under test, never stale images of an earlier `make images`. The images of
// upstream's components are written there as well when `make tools-upstream` built their binaries.
// It runs `go build`, so the working directory must be inside the module.
func BuildBinDir(ctx context.Context, dir string) error {
	tools, err := localseed.DefaultBinDir()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrToolsMissing, err)
	}
	for _, name := range append(slices.Clone(seedTools), localseed.NodeTools...) {
		target, err := filepath.EvalSymlinks(filepath.Join(tools, name))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrToolsMissing, name, err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	moduleDir, err := moduleRoot()
	if err != nil {
		return err
	}
	opts := imagebuild.Options{ModuleDir: moduleDir, Version: version.Get(), Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}}
	for _, bin := range imagebuild.Project {
		index, err := imagebuild.Build(ctx, opts, bin)
		if err != nil {
			return err
		}
		if err := imagebuild.WriteLayout(filepath.Join(dir, "images", bin.Name), index, opts.Version); err != nil {
			return err
		}
	}
	return writeUpstreamImages(ctx, moduleDir, tools, filepath.Join(dir, "images"))
}

// writeUpstreamImages writes the images of upstream's components (imagebuild.Upstream, as `make
// images-upstream` writes them) from the binaries `make tools-upstream` linked into tools, into imagesDir.
// A component whose binary is missing is left out: `make tools` does not build them, and the specs that run
// upstream's components skip without their images (Seed.PushUpstreamImages).
func writeUpstreamImages(ctx context.Context, moduleDir, tools, imagesDir string) error {
	images, err := imagebuild.Upstream(moduleDir, tools)
	if err != nil {
		return err
	}
	opts := imagebuild.Options{ModuleDir: moduleDir, Platforms: []v1.Platform{imagebuild.HostPlatform()}}
	for _, bin := range images {
		if _, err := os.Stat(bin.Prebuilt); err != nil {
			continue
		}
		index, err := imagebuild.Build(ctx, opts, bin)
		if err != nil {
			return err
		}
		if err := imagebuild.WriteLayout(filepath.Join(imagesDir, bin.Name), index, bin.Tag(opts)); err != nil {
			return err
		}
	}
	return nil
}

// moduleRoot is the module's directory, as go reports it for the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
