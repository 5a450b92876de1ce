// Package localseedtest holds what the tests that start a local seed share.
package localseedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// SkipUnlessPossible skips t under -short (a seed takes tens of seconds to start) and when the test does
// not run as root (the seed creates network and mount namespaces).
func SkipUnlessPossible(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a local seed: not with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local seed needs root (network and mount namespaces)")
	}
}

// LogTails logs the last tailBytes of every file below dir (one of a seed's LogDirs), so that a failed
// test shows what its components and containers said.
func LogTails(t testing.TB, dir string, tailBytes int) {
	t.Helper()
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			if len(data) > tailBytes {
				data = data[len(data)-tailBytes:]
			}
			t.Logf("log %s:\n%s", path, data)
		}
		return nil
	})
}

// SkipUnlessNodeTools skips t when `make tools` has not built the node binaries (tools) into the bin
// directory (KUBEBUILDER_ASSETS, where the Makefile links them), naming the first that is missing.
func SkipUnlessNodeTools(t testing.TB, tools []string) {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	for _, name := range tools {
		if _, err := os.Stat(filepath.Join(dir, name)); dir == "" || err != nil {
			t.Skipf("%s missing in %q (KUBEBUILDER_ASSETS): run `make tools`", name, dir)
		}
	}
}
