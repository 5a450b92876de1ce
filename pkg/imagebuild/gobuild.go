package imagebuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// binaryFor returns the binary of bin for the platform: the prebuilt one (host platform only), or built.
func binaryFor(ctx context.Context, dir string, bin Binary, ldflags string, platform v1.Platform) ([]byte, error) {
	if bin.Prebuilt == "" {
		return goBuild(ctx, dir, bin.Package, ldflags, true, platform)
	}
	if platform.OS != runtime.GOOS || platform.Architecture != runtime.GOARCH {
		return nil, fmt.Errorf("prebuilt %s is for %s/%s, not %s", bin.Prebuilt, runtime.GOOS, runtime.GOARCH, platform.String())
	}
	return os.ReadFile(bin.Prebuilt)
}

// strippedLDFlags leave out the symbol table, DWARF and the build ID (which would hash the build's inputs
// differently per machine).
const strippedLDFlags = "-s -w -buildid="

// goBuild compiles the main package pkg (relative to dir, the module root) as a static binary for the
// platform and returns its bytes. -trimpath and CGO_ENABLED=0 keep the build machine's paths and C
// libraries out of it, and the settings of the environment that change the code are pinned (GOFLAGS,
// GOAMD64, GOARM64, GOEXPERIMENT); the toolchain is the one the module's go.mod selects. The module's VCS
// stamp stays when stampVCS is set (revision, commit time, and "modified", which untracked files also set:
// a clean clone gives the same bytes, a work tree with stray files does not).
func goBuild(ctx context.Context, dir, pkg, ldflags string, stampVCS bool, platform v1.Platform) ([]byte, error) {
	out, err := os.MkdirTemp("", "imagebuild-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	binary := filepath.Join(out, "bin")
	buildvcs := "-buildvcs=auto" // stamped where there is a repository; a source archive builds without
	if !stampVCS {
		buildvcs = "-buildvcs=false"
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", buildvcs, "-ldflags", ldflags, "-o", binary, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture,
		"GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	if platform.Variant != "" && platform.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+platform.Variant[1:])
	}
	if output, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s for %s: %w\n%s", pkg, platform.String(), err, output)
	}
	return os.ReadFile(binary)
}
