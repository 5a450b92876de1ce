package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

// Defaults of the compaction controller.
const (
	// DefaultCompactionWorkers is how many Etcds are looked at in parallel; each look is a few cache reads.
	DefaultCompactionWorkers = 3
	// DefaultCompactionEventsThreshold applies when an Etcd sets no spec.backup.snapshotCompaction.eventsThreshold:
	// a million delta events is where restoring from the snapshots (replaying every event) starts to take
	// minutes, while compacting more often would mostly re-upload unchanged data.
	DefaultCompactionEventsThreshold = int64(1_000_000)
	// DefaultCompactionTriggerFullSnapshotThreshold applies when an Etcd sets no
	// spec.backup.snapshotCompaction.triggerFullSnapshotThreshold (upstream druid's default): beyond three
	// million delta events a compaction Job, which replays every one of them, is unlikely to finish, so druid
	// asks the backup leader for a full snapshot instead.
	DefaultCompactionTriggerFullSnapshotThreshold = int64(3_000_000)
	// DefaultCompactionActiveDeadline bounds one compaction Job: a restore, compaction, defragmentation and upload of
	// an 8Gi database fits comfortably; a Job beyond it is stuck and is failed by the Job controller.
	DefaultCompactionActiveDeadline = 3 * time.Hour
	// DefaultCompactionRetryBackoff is the wait after a failed compaction before the next Job; it doubles with each
	// consecutive failure up to DefaultCompactionMaxRetryBackoff, so a broken store is not hammered by Jobs that each
	// download every snapshot.
	DefaultCompactionRetryBackoff = 5 * time.Minute
	// DefaultCompactionMaxRetryBackoff caps the wait between failed compactions.
	DefaultCompactionMaxRetryBackoff = 2 * time.Hour
)

// CompactionController configures the compaction controller.
type CompactionController struct {
	// EnableBackupCompaction turns the controller on. It is opt-in (false by default, as in upstream
	// druid): each compaction runs a Job that restores the whole database, which a landscape must budget for.
	EnableBackupCompaction bool
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
	// BackupRestoreImage runs `etcdbrctl compact` unless an Etcd pins spec.backup.image.
	BackupRestoreImage string
	// ImageCompatibility tells whether the Job's image runs our etcdbrctl or the upstream one (the Etcd
	// controller's setting, Images.Compatibility).
	ImageCompatibility imagecaps.Config
	// LocalBackup limits the node directories a Local store may mount.
	LocalBackup LocalBackup
	// EventsThreshold is the default of spec.backup.snapshotCompaction.eventsThreshold.
	EventsThreshold int64
	// TriggerFullSnapshotThreshold is the default of spec.backup.snapshotCompaction.triggerFullSnapshotThreshold.
	TriggerFullSnapshotThreshold int64
	// ActiveDeadline is the Job's activeDeadlineSeconds.
	ActiveDeadline time.Duration
	// RetryBackoff is the wait after the first failed compaction of an Etcd; it doubles per failure.
	RetryBackoff time.Duration
	// MaxRetryBackoff caps the wait.
	MaxRetryBackoff time.Duration
}

// Default fills every zero field with its default; EnableBackupCompaction and the image stay as given.
func (c *CompactionController) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultCompactionWorkers
	}
	if c.EventsThreshold == 0 {
		c.EventsThreshold = DefaultCompactionEventsThreshold
	}
	if c.TriggerFullSnapshotThreshold == 0 {
		c.TriggerFullSnapshotThreshold = DefaultCompactionTriggerFullSnapshotThreshold
	}
	if c.ActiveDeadline == 0 {
		c.ActiveDeadline = DefaultCompactionActiveDeadline
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = DefaultCompactionRetryBackoff
	}
	if c.MaxRetryBackoff == 0 {
		c.MaxRetryBackoff = DefaultCompactionMaxRetryBackoff
	}
}

// Validate rejects a configuration the controller cannot run with, naming every offending field. A
// disabled controller needs nothing.
func (c CompactionController) Validate() error {
	if !c.EnableBackupCompaction {
		return nil
	}
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("compaction controller: workers must be at least 1, got %d", c.Workers))
	}
	if c.BackupRestoreImage == "" {
		errs = append(errs, errors.New("compaction controller: backupRestoreImage must be set"))
	}
	if c.EventsThreshold < 1 {
		errs = append(errs, fmt.Errorf("compaction controller: eventsThreshold must be at least 1, got %d", c.EventsThreshold))
	}
	if c.TriggerFullSnapshotThreshold < 1 {
		errs = append(errs, fmt.Errorf("compaction controller: triggerFullSnapshotThreshold must be at least 1, got %d", c.TriggerFullSnapshotThreshold))
	}
	if c.ActiveDeadline < time.Second {
		errs = append(errs, fmt.Errorf("compaction controller: activeDeadline must be at least 1s, got %s", c.ActiveDeadline))
	}
	if c.RetryBackoff <= 0 || c.MaxRetryBackoff < c.RetryBackoff {
		errs = append(errs, fmt.Errorf("compaction controller: need 0 < retryBackoff (%s) <= maxRetryBackoff (%s)", c.RetryBackoff, c.MaxRetryBackoff))
	}
	errs = append(errs, c.LocalBackup.Validate())
	return errors.Join(errs...)
}

// Backoff is the wait after the given number of consecutive failures (at least 1).
func (c CompactionController) Backoff(failures int) time.Duration {
	d := c.RetryBackoff
	for i := 1; i < failures && d < c.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, c.MaxRetryBackoff)
}
