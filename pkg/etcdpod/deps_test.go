package etcdpod

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSidecarAndWrapperDoNotLinkDruid keeps the pod's containers independent of druid: what they need of
// the pod's shape is in this package, so `etcdbrctl` and the wrapper must not link any package of
// pkg/druid (an import of an operator package for a path constant would pull in druid's controllers).
func TestSidecarAndWrapperDoNotLinkDruid(t *testing.T) {
	const module = "github.com/gardener-etcd/gardener-etcd/"
	out, err := exec.Command("go", "list", "-deps", module+"cmd/etcdbrctl", module+"cmd/etcd-wrapper").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var druid []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module+"pkg/druid") {
			druid = append(druid, pkg)
		}
	}
	if len(druid) > 0 {
		t.Errorf("etcdbrctl or etcd-wrapper links druid's packages %v; take the pod's contract from pkg/etcdpod", druid)
	}
	if !strings.Contains(string(out), module+"pkg/etcdpod\n") {
		t.Errorf("go list -deps does not list pkg/etcdpod; is the check still looking at the binaries?\n%s", out)
	}
}
