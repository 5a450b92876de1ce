package kubeletnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A paused container (containerd freezes its cgroup) must not keep a node from being removed: SIGKILL
// does not end a frozen task, so removeCgroups thaws before it kills. Here a process is frozen in a
// child cgroup of a throwaway node, as `ctr tasks pause` leaves it, and the node's cgroups are removed.
func TestRemoveCgroupsEndsFrozenTasks(t *testing.T) {
	freezer := freezerHierarchy(t)
	name := fmt.Sprintf("gardener-etcd-freezer-test-%d", os.Getpid())
	t.Cleanup(func() { _ = removeCgroups(name) })
	if err := createCgroupRoot(name); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(freezer, name, "paused-container")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sleeper.Wait() }()
	t.Cleanup(func() { _ = sleeper.Process.Kill() })

	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(sleeper.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("FROZEN"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); freezerState(dir) != "FROZEN"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("freezer.state is %q, want FROZEN", freezerState(dir))
		}
	}

	if err := removeCgroups(name); err != nil {
		t.Fatalf("removeCgroups: %v", err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("the frozen process ended with %v, want killed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the frozen process still runs")
	}
	if left := CgroupsOf(name); len(left) > 0 {
		t.Fatalf("cgroups left: %v", left)
	}
}

func freezerState(dir string) string {
	state, _ := os.ReadFile(filepath.Join(dir, "freezer.state"))
	return strings.TrimSpace(string(state))
}

// freezerHierarchy is the cgroup v1 freezer hierarchy, or the test is skipped with the reason.
func freezerHierarchy(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	if _, err := os.Stat(filepath.Join(cgroupMountRoot, "cgroup.controllers")); err == nil {
		t.Skip("cgroup v2 host: the v1 freezer is not in use")
	}
	dir := filepath.Join(cgroupMountRoot, "freezer")
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		t.Skipf("no cgroup v1 freezer hierarchy at %s: %v", dir, err)
	}
	return dir
}
