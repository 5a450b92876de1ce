package podwire

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gardener-etcd/gardener-etcd/"

// depsOf lists what the packages link, their tests included.
func depsOf(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-test"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps -test %v: %v\n%s", pkgs, err, out)
	}
	return strings.Fields(string(out))
}

func linked(deps []string, prefix string) []string {
	var found []string
	for _, d := range deps {
		if strings.HasPrefix(d, module+prefix) {
			found = append(found, d)
		}
	}
	return found
}

// TestWrapperAndSidecarDoNotImportEachOther keeps the pod's two containers apart: they meet on the wire
// spelled here, so that neither links the other's code (tests included; suites that run both are in
// test/integration/pod).
func TestWrapperAndSidecarDoNotImportEachOther(t *testing.T) {
	if found := linked(depsOf(t, module+"pkg/wrapper/..."), "pkg/backuprestore"); len(found) > 0 {
		t.Errorf("pkg/wrapper links %v", found)
	}
	if found := linked(depsOf(t, module+"pkg/backuprestore/..."), "pkg/wrapper"); len(found) > 0 {
		t.Errorf("pkg/backuprestore links %v", found)
	}
}

// TestWireImportsNoComponent keeps this package below druid, the sidecar and the wrapper.
func TestWireImportsNoComponent(t *testing.T) {
	deps := depsOf(t, module+"pkg/podwire")
	for _, prefix := range []string{"pkg/druid", "pkg/backuprestore", "pkg/wrapper"} {
		if found := linked(deps, prefix); len(found) > 0 {
			t.Errorf("pkg/podwire links %v", found)
		}
	}
}
