package config

import (
	"errors"
	"fmt"
)

// DefaultCopyBackupsTaskWorkers is how many tasks are reconciled in parallel; tasks are rare (control-plane migrations).
const DefaultCopyBackupsTaskWorkers = 3

// CopyBackupsTaskController configures the EtcdCopyBackupsTask controller.
type CopyBackupsTaskController struct {
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
	// BackupRestoreImage runs `etcdbrctl copy` in the worker Jobs.
	BackupRestoreImage string
	// LocalBackup limits the node directories a Local source or target store may mount.
	LocalBackup LocalBackup
}

// Default fills unset fields with their defaults.
func (c *CopyBackupsTaskController) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultCopyBackupsTaskWorkers
	}
}

// Validate rejects a configuration the controller cannot run with, naming every offending field.
func (c CopyBackupsTaskController) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("copy-backups-task controller: workers must be at least 1, got %d", c.Workers))
	}
	if c.BackupRestoreImage == "" {
		errs = append(errs, errors.New("copy-backups-task controller: backupRestoreImage must be set"))
	}
	errs = append(errs, c.LocalBackup.Validate())
	return errors.Join(errs...)
}
