package kubeletnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// A paused container (containerd freezes its cgroup) must not keep a node from being removed: SIGKILL
// does not end a frozen task, so removeCgroups thaws before it kills. Here a process is frozen in a
// child cgroup of a throwaway node, as `ctr tasks pause` leaves it, and the node's cgroups are removed.
func TestRemoveCgroupsEndsFrozenTasks(t *testing.T) {
	freezer := freezerHierarchy(t)
	g := NewWithT(t)
	name := fmt.Sprintf("gardener-etcd-freezer-test-%d", os.Getpid())
	t.Cleanup(func() { _ = removeCgroups(name) })
	g.Expect(createCgroupRoot(name)).To(Succeed())
	dir := filepath.Join(freezer, name, "paused-container")
	g.Expect(os.Mkdir(dir, 0o755)).To(Succeed())

	sleeper := exec.Command("sleep", "600")
	g.Expect(sleeper.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- sleeper.Wait() }()
	t.Cleanup(func() { _ = sleeper.Process.Kill() })

	g.Expect(os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(sleeper.Process.Pid)), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("FROZEN"), 0o644)).To(Succeed())
	g.Eventually(func() string {
		state, _ := os.ReadFile(filepath.Join(dir, "freezer.state"))
		return strings.TrimSpace(string(state))
	}).WithTimeout(5 * time.Second).Should(Equal("FROZEN"))

	g.Expect(removeCgroups(name)).To(Succeed())
	var exit *exec.ExitError
	g.Eventually(exited).WithTimeout(5 * time.Second).Should(Receive(BeAssignableToTypeOf(exit)))
	g.Expect(CgroupsOf(name)).To(BeEmpty())
}

// freezerHierarchy is the cgroup v1 freezer hierarchy, or the test is skipped with the reason.
func freezerHierarchy(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	dir := filepath.Join(cgroupMountRoot, "freezer")
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		t.Skipf("no cgroup v1 freezer hierarchy at %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(cgroupMountRoot, "cgroup.controllers")); err == nil {
		t.Skip("cgroup v2 host: the v1 freezer is not in use")
	}
	return dir
}
