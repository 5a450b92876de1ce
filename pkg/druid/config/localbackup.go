package config

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// DefaultLocalBackupHostPath is the node directory of the Local backup provider's buckets that druid allows
// unless configured otherwise: the root the backup extension and the local seed use.
const DefaultLocalBackupHostPath = "/etc/gardener/local-backupbuckets"

// LocalBackup limits the node directories a Local backup store may mount. The directory comes from the
// backup secret (key hostPath), which whoever writes Secrets in a shoot namespace controls; without a limit
// a secret with `hostPath: /` would mount the node's root filesystem into the etcd pods and druid's Jobs.
type LocalBackup struct {
	// AllowedHostPaths are the directories (and everything below them) a Local store's hostPath may name.
	// nil means DefaultLocalBackupHostPath only; an empty, non-nil list refuses the Local provider.
	AllowedHostPaths []string
}

// allowed is the effective list.
func (c LocalBackup) allowed() []string {
	if c.AllowedHostPaths == nil {
		return []string{DefaultLocalBackupHostPath}
	}
	return c.AllowedHostPaths
}

// Validate rejects allowed directories that are not absolute or that are the root directory.
func (c LocalBackup) Validate() error {
	var errs []error
	for _, dir := range c.AllowedHostPaths {
		if !path.IsAbs(dir) || path.Clean(dir) == "/" {
			errs = append(errs, fmt.Errorf("localBackup: allowedHostPaths entry %q must be an absolute directory other than /", dir))
		}
	}
	return errors.Join(errs...)
}

// Check returns an error unless hostPath is one of the allowed directories or below one.
func (c LocalBackup) Check(hostPath string) error {
	_, err := c.Root(hostPath)
	return err
}

// Root is the allowed directory hostPath is at or below — the most specific one when allowed directories
// nest — or Check's error. Pods mount this directory, not hostPath: it is the operator's, so the kubelet
// follows no symlink a tenant placed below it to build the volume (see storeaccess.LocalStoreVolume).
func (c LocalBackup) Root(hostPath string) (string, error) {
	clean := path.Clean(hostPath)
	switch {
	case !path.IsAbs(hostPath):
		return "", fmt.Errorf("hostPath %q must be an absolute path", hostPath)
	case clean == "/":
		return "", fmt.Errorf("hostPath %q would mount the node's whole filesystem", hostPath)
	}
	allowed := c.allowed()
	root := ""
	for _, dir := range allowed {
		dir = path.Clean(dir)
		if (clean == dir || strings.HasPrefix(clean, dir+"/")) && len(dir) > len(root) {
			root = dir
		}
	}
	if root != "" {
		return root, nil
	}
	if len(allowed) == 0 {
		return "", fmt.Errorf("hostPath %q: the Local backup provider is not allowed by druid's configuration (--local-backup-allowed-host-paths is empty)", hostPath)
	}
	return "", fmt.Errorf("hostPath %q is not below a directory druid allows for the Local backup provider (%s; see --local-backup-allowed-host-paths)",
		hostPath, strings.Join(allowed, ", "))
}
