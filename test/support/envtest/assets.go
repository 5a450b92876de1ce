package envtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// controlPlaneBinaries are the binaries envtest runs.
var controlPlaneBinaries = []string{"kube-apiserver", "etcd"}

// BinDir returns the directory with the tool binaries: $KUBEBUILDER_ASSETS when set, else bin/ of the
// project root (found by walking up from the working directory to the project's go.mod).
func BinDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := ProjectRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// ProjectRoot walks up from the working directory to the directory of the project's go.mod.
func ProjectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/gardener-etcd/gardener-etcd\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the gardener-etcd project root (go.mod) above the working directory")
		}
		dir = parent
	}
}

// wrapBinaries writes, into a fresh directory, one script per control-plane binary that execs the real
// binary with the parent-death signal set to KILL, and returns that directory. Without setpriv it returns
// binDir unchanged.
func wrapBinaries(binDir string) (string, error) {
	for _, name := range controlPlaneBinaries {
		if _, err := os.Stat(filepath.Join(binDir, name)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make tools` first (or set KUBEBUILDER_ASSETS)", name, binDir)
		}
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return binDir, nil
	}
	dir, err := os.MkdirTemp("", "gardener-etcd-envtest-bin-")
	if err != nil {
		return "", err
	}
	for _, name := range controlPlaneBinaries {
		binary, err := filepath.Abs(filepath.Join(binDir, name))
		if err != nil {
			return "", err
		}
		script := fmt.Sprintf("#!/bin/sh\nexec %s --pdeathsig KILL -- %s \"$@\"\n", setpriv, binary)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}
