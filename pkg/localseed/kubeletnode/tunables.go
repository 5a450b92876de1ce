package kubeletnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kernelTunables are the host-wide kernel settings (none belongs to a network namespace) that every
// kubelet sets when it starts without protectKernelDefaults: overcommit, panic on OOM, reboot 10 s after a
// panic, panic on oops, and the root user's key quotas. protectKernelDefaults would make the kubelet refuse
// to start instead, so the seed saves them before its first kubelet and puts them back when it stops.
var kernelTunables = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// SaveKernelTunables records the kernel settings the kubelets will change in path, unless path exists
// already (the first record is the host's own).
func SaveKernelTunables(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	values := map[string]string{}
	for _, name := range kernelTunables {
		data, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			return fmt.Errorf("reading kernel setting %s: %w", name, err)
		}
		values[name] = strings.TrimSpace(string(data))
	}
	data, err := json.Marshal(values)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// RestoreKernelTunables writes the settings recorded in path back and removes the record; without a
// record it does nothing.
func RestoreKernelTunables(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	values := map[string]string{}
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("kernel settings record %s: %w", path, err)
	}
	var errs []error
	for _, name := range kernelTunables {
		if value, ok := values[name]; ok {
			if err := os.WriteFile(filepath.Join("/proc/sys", name), []byte(value), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring kernel setting %s=%s: %w", name, value, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.Remove(path)
}
