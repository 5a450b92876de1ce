package kubeletnode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Cleanup removes everything a node named name may have left: the processes in its cgroups (containers)
// and in its network namespace (containerd, shims, kubelet), every mount below its state directory
// (container root file systems, pod network namespaces, volumes), its cgroups and its sockets. It is what Stop does
// after the kubelet is gone, and what `local down` does for a crashed seed. Idempotent.
func Cleanup(_ context.Context, name, netns, stateDir string) error {
	var errs []error
	killCgroupProcesses(name)
	for _, pid := range netnsPids(netns) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := unmountBelow(stateDir); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroups(name); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(Config{Name: name}.SocketDir()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// netnsPids are the processes whose network namespace is the one bound at path.
func netnsPids(path string) []int {
	var target unix.Stat_t
	if err := unix.Stat(path, &target); err != nil {
		return nil
	}
	want := fmt.Sprintf("net:[%d]", target.Ino)
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && link == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// MountsBelow lists the mount points at or below dir, deepest first.
func MountsBelow(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	prefix := filepath.Clean(dir)
	var mounts []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 {
			continue
		}
		point := unescapeMountPath(fields[4])
		if point == prefix || strings.HasPrefix(point, prefix+"/") {
			mounts = append(mounts, point)
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	return mounts
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountBelow detaches every mount at or below dir, deepest first; a mount stacked twice is unmounted
// again until none is left.
func unmountBelow(dir string) error {
	for range 5 {
		mounts := MountsBelow(dir)
		if len(mounts) == 0 {
			return nil
		}
		for _, m := range mounts {
			_ = unix.Unmount(m, unix.MNT_DETACH)
		}
	}
	if left := MountsBelow(dir); len(left) > 0 {
		return fmt.Errorf("mounts left below %s: %v", dir, left)
	}
	return nil
}
