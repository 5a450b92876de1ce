package seedworkflow

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
)

// ErrToolsMissing is wrapped by BuildBinDir when a binary of `make tools` is missing: suites skip rather
// than fail on a machine that has not built them.
var ErrToolsMissing = errors.New("tools missing (make tools)")

// seedTools are the control-plane and S3 binaries the local seed runs from its bin directory.
var seedTools = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "versitygw"}

// projectImages are the commands whose binaries the seed's nodes run for the project's images.
var projectImages = []string{"etcd-wrapper", "etcdbrctl", "etcd-druid", "gardener-extension-backup"}

// BuildBinDir fills dir with the project's image binaries built from this checkout (never stale ones from
// an earlier `make build`) and links the tools of `make tools` next to them, so that a test seed runs the
// code under test. It runs `go build`, so the working directory must be inside the module.
func BuildBinDir(dir string) error {
	tools, err := localseed.DefaultBinDir()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrToolsMissing, err)
	}
	for _, name := range seedTools {
		target, err := filepath.EvalSymlinks(filepath.Join(tools, name))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrToolsMissing, name, err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	const module = "github.com/gardener-etcd/gardener-etcd/cmd/"
	args := []string{"build", "-o", dir + "/"}
	for _, name := range projectImages {
		args = append(args, module+name)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("building the project's binaries: %w\n%s", err, out)
	}
	return nil
}
