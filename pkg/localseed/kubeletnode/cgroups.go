package kubeletnode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupMountRoot is where the host mounts its cgroup hierarchies (v1 controllers, the v2 unified tree).
const cgroupMountRoot = "/sys/fs/cgroup"

// hierarchies are the mounted cgroup hierarchies: on a cgroup v2 host the one unified tree at
// cgroupMountRoot, on a v1 or hybrid host one directory per hierarchy below it.
func hierarchies() []string {
	if _, err := os.Stat(filepath.Join(cgroupMountRoot, "cgroup.controllers")); err == nil {
		return []string{cgroupMountRoot}
	}
	entries, err := os.ReadDir(cgroupMountRoot)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		path := filepath.Join(cgroupMountRoot, e.Name())
		if info, err := os.Lstat(path); err == nil && info.IsDir() { // skips the cpu,cpuacct style links
			if _, err := os.Stat(filepath.Join(path, "cgroup.procs")); err == nil {
				dirs = append(dirs, path)
			}
		}
	}
	return dirs
}

// createCgroupRoot makes the node's cgroup parent in every hierarchy: the kubelet refuses a cgroup root
// that does not exist. A new cpuset cgroup has no CPUs and memory nodes until given its parent's.
func createCgroupRoot(name string) error {
	for _, h := range hierarchies() {
		dir := filepath.Join(h, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(h, file))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, file), parent, 0o644); err != nil {
				return fmt.Errorf("initialising %s: %w", filepath.Join(dir, file), err)
			}
		}
	}
	return nil
}

// CgroupsOf lists the cgroup directories of the nodes whose names match pattern (filepath.Match), for
// leftover checks.
func CgroupsOf(pattern string) []string {
	var dirs []string
	for _, h := range hierarchies() {
		matches, _ := filepath.Glob(filepath.Join(h, pattern))
		dirs = append(dirs, matches...)
	}
	return dirs
}

// cgroupDirs lists the node's cgroup directories in every hierarchy, deepest first.
func cgroupDirs(name string) []string {
	var dirs []string
	for _, h := range hierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, name), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// cgroupPids are the processes in the node's cgroups.
func cgroupPids(name string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, dir := range cgroupDirs(name) {
		f, err := os.Open(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			if pid, err := strconv.Atoi(scanner.Text()); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
		_ = f.Close()
	}
	return pids
}

// killCgroupProcesses sends SIGKILL to everything in the node's cgroups. A frozen task (a container
// paused through containerd, which uses the cgroup freezer) does not act on the signal until it is
// thawed, and its cgroup could never be removed, so the node's cgroups are thawed first.
func killCgroupProcesses(name string) {
	thawCgroups(name)
	for _, pid := range cgroupPids(name) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// thawCgroups thaws every frozen cgroup of the node: freezer.state on a v1 host, cgroup.freeze on v2.
func thawCgroups(name string) {
	for _, dir := range cgroupDirs(name) {
		if state, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil && strings.TrimSpace(string(state)) != "THAWED" {
			_ = os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0o644)
		}
		if frozen, err := os.ReadFile(filepath.Join(dir, "cgroup.freeze")); err == nil && strings.TrimSpace(string(frozen)) != "0" {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("0"), 0o644)
		}
	}
}

// removeCgroups kills what runs in the node's cgroups and removes them, deepest first. A cgroup can only
// be removed once empty, and a killed process leaves it a moment later, hence the retries.
func removeCgroups(name string) error {
	deadline := time.Now().Add(stopGrace)
	for {
		killCgroupProcesses(name)
		var errs []error
		for _, dir := range cgroupDirs(name) {
			if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
			}
		}
		if len(errs) == 0 || time.Now().After(deadline) {
			return errors.Join(errs...)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
