package localseed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/provisioner"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
)

// instanceFile records an instance in its state dir.
const instanceFile = "instance.json"

type instance struct {
	Prefix string `json:"prefix"`
	PID    int    `json:"pid"`
	// StartTime is the seed process's start time (clock ticks after boot, /proc/<pid>/stat field 22),
	// so that a PID reused by an unrelated process after a crash is never mistaken for the seed.
	StartTime uint64 `json:"startTime"`
}

// Instance describes the local seed recorded in a state directory.
type Instance struct {
	// Prefix names the instance's network namespaces, links and nodes.
	Prefix string
	// PID is the process that runs the seed.
	PID       int
	startTime uint64
}

// LookupInstance reads the instance record of stateDir; it fails when the directory holds none.
func LookupInstance(stateDir string) (*Instance, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, instanceFile))
	if err != nil {
		return nil, fmt.Errorf("%s holds no local seed instance: %w", stateDir, err)
	}
	var in instance
	if err := json.Unmarshal(data, &in); err != nil || !strings.HasPrefix(in.Prefix, "ls") {
		return nil, fmt.Errorf("invalid instance record in %s", stateDir)
	}
	return &Instance{Prefix: in.Prefix, PID: in.PID, startTime: in.StartTime}, nil
}

// Running reports whether the recorded seed process still runs (same PID and start time, not a zombie).
func (i *Instance) Running() bool {
	start, ok := processStartTime(i.PID)
	return ok && start == i.startTime && alive(i.PID)
}

func writeInstance(dir string, in instance) error {
	data, _ := json.Marshal(in)
	if err := os.WriteFile(filepath.Join(dir, instanceFile), data, 0o644); err != nil {
		return fmt.Errorf("recording instance: %w", err)
	}
	return nil
}

// Down removes what a crashed instance left behind in stateDir: processes (control plane, registry, S3,
// the nodes' components and containers), mounts, cgroups, network namespaces, links, changed kernel settings
// and the directory. It refuses directories without an instance
// record, so it never deletes an unrelated directory.
func Down(ctx context.Context, stateDir string) error {
	abs, err := resolvedPath(stateDir)
	if err != nil {
		return err
	}
	in, err := LookupInstance(abs)
	if err != nil {
		return err
	}
	var errs []error
	pids := processesMentioning(abs)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := waitGone(ctx, pids); err != nil {
		errs = append(errs, err)
	}
	// Real nodes: their containers (in the nodes' cgroups) and mounts go before the directory does, so
	// that removing it never walks into a container's root file system or a volume.
	nodeDirs, _ := filepath.Glob(filepath.Join(abs, "nodes", in.Prefix+"-node-*"))
	for _, dir := range nodeDirs {
		name := filepath.Base(dir)
		if err := kubeletnode.Cleanup(ctx, name, filepath.Join("/run/netns", name), dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := provisioner.UnmountAll(volumesDir(abs)); err != nil {
		errs = append(errs, err)
	}
	if err := kubeletnode.HostKernelTunables.Release(abs); err != nil {
		errs = append(errs, err)
	}
	if err := seednet.Cleanup(ctx, in.Prefix); err != nil {
		errs = append(errs, err)
	}
	if err := removeStateDir(abs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// processesMentioning lists the processes whose command line contains marker (the control plane and
// S3 server name their state-dir paths in their flags).
func processesMentioning(marker string) []int {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), marker) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until the processes have exited (or are zombies waiting for their reaper), so that
// nothing writes into the state directory while it is removed.
func waitGone(ctx context.Context, pids []int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, pid := range pids {
		for alive(pid) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("process %d still alive after SIGKILL", pid)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	fields := statFields(pid)
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// processStartTime is field 22 of /proc/<pid>/stat.
func processStartTime(pid int) (uint64, bool) {
	fields := statFields(pid)
	if len(fields) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	return v, err == nil
}

// statFields are the fields of /proc/<pid>/stat after the command name (field 3, the state, first);
// the name is skipped by its last ")" because it may contain spaces and parentheses itself.
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndex(string(data), ")")
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// Leftovers describes what of an instance still exists: processes naming its state dir, network
// namespaces, links, cgroups and socket directories of its prefix, mounts below either, and the state
// dir itself. (iptables rules and conntrack entries live in the nodes' network namespaces and go with them.) It is empty after
// a clean teardown, which tests (and the e2e suite) assert.
func Leftovers(stateDir, prefix string) []string {
	var left []string
	if pids := processesMentioning(stateDir); len(pids) > 0 {
		left = append(left, fmt.Sprintf("processes %v", pids))
	}
	netns, links := seednet.Leftovers(prefix)
	if len(netns) > 0 {
		left = append(left, fmt.Sprintf("network namespaces %v", netns))
	}
	if len(links) > 0 {
		left = append(left, fmt.Sprintf("links %v", links))
	}
	if cgroups := kubeletnode.CgroupsOf(prefix + "-*"); len(cgroups) > 0 {
		left = append(left, fmt.Sprintf("cgroups %v", cgroups))
	}
	if sockets, _ := filepath.Glob(kubeletnode.Config{Name: prefix + "-*"}.SocketDir()); len(sockets) > 0 {
		left = append(left, fmt.Sprintf("socket directories %v", sockets))
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(mounts), "\n") {
		if strings.Contains(line, stateDir) || strings.Contains(line, "/run/netns/"+prefix+"-") {
			left = append(left, "mount "+line)
		}
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		left = append(left, fmt.Sprintf("state dir %s (%v)", stateDir, err))
	}
	return left
}

// removeStateDir deletes the instance's directory, unless something is still mounted below it: a volume
// or a container's root file system may be a bind mount of a host directory, and deleting through it
// would delete host data. Then the directory and its instance record stay, for another Down.
func removeStateDir(dir string) error {
	if mounts := kubeletnode.MountsBelow(dir); len(mounts) > 0 {
		return fmt.Errorf("not removing %s: still mounted below it: %v", dir, mounts)
	}
	return os.RemoveAll(dir)
}

// resolvedPath is the absolute path with every symbolic link resolved, as /proc/self/mountinfo names
// mount points: the mounts below a state directory reached through a link are found only so.
func resolvedPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
