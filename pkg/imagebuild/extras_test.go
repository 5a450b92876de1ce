package imagebuild

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Only the etcd-wrapper image carries the old etcd servers, at the paths druid passes, built from the
// modules `make tools` builds bin/etcd-3.5 and bin/etcd-3.6 from.
func TestOnlyTheWrapperImageCarriesTheStepBinaries(t *testing.T) {
	for _, bin := range Project {
		if bin.Name != "etcd-wrapper" {
			if len(bin.Extras) != 0 {
				t.Errorf("%s carries extras %s", bin.Name, extraPaths(bin.Extras))
			}
			continue
		}
		want := map[string]string{etcdpod.StepEtcd35BinaryPath: "hack/tools/etcd-3.5", etcdpod.StepEtcd36BinaryPath: "hack/tools/etcd-3.6"}
		if len(bin.Extras) != len(want) {
			t.Fatalf("etcd-wrapper carries %s", extraPaths(bin.Extras))
		}
		for _, x := range bin.Extras {
			if want[x.Path] != x.ModuleDir {
				t.Errorf("%s is built from %q, want %q", x.Path, x.ModuleDir, want[x.Path])
			}
			for _, f := range []string{"go.mod", "go.sum", "main.go"} {
				if _, err := os.Stat(filepath.Join("../..", x.ModuleDir, f)); err != nil {
					t.Errorf("%s: %v", x.Path, err)
				}
			}
		}
	}
}

func TestParentDirsComeOnceAndOutermostFirst(t *testing.T) {
	seen := map[string]bool{}
	var got []string
	for _, p := range []string{"usr/local/bin/a", "usr/local/bin/b", "usr/lib/c"} {
		for _, e := range parentDirs(p, seen) {
			got = append(got, e.path)
		}
	}
	want := []string{"usr/", "usr/local/", "usr/local/bin/", "usr/lib/"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
