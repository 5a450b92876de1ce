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

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/podnet"
)

// instanceFile records an instance in its state dir.
const instanceFile = "instance.json"

type instance struct {
	Prefix string `json:"prefix"`
	PID    int    `json:"pid"`
}

func writeInstance(dir string, in instance) error {
	data, _ := json.Marshal(in)
	if err := os.WriteFile(filepath.Join(dir, instanceFile), data, 0o644); err != nil {
		return fmt.Errorf("recording instance: %w", err)
	}
	return nil
}

// Down removes what a crashed instance left behind in stateDir: processes (control plane, S3 and pod
// containers), network namespaces, links and the directory. It refuses directories without an instance
// record, so it never deletes an unrelated directory.
func Down(ctx context.Context, stateDir string) error {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(abs, instanceFile))
	if err != nil {
		return fmt.Errorf("%s holds no local seed instance: %w", abs, err)
	}
	var in instance
	if err := json.Unmarshal(data, &in); err != nil || !strings.HasPrefix(in.Prefix, "ls") {
		return fmt.Errorf("invalid instance record in %s", abs)
	}
	var errs []error
	pids := processesMentioning(abs)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := waitGone(ctx, pids); err != nil {
		errs = append(errs, err)
	}
	if err := podnet.Cleanup(ctx, in.Prefix); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(abs); err != nil {
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
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may itself contain ") ".
	i := strings.LastIndex(string(data), ") ")
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
}
