package snapshotter

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// Defaults as the upstream sidecar's flags have them.
const (
	DefaultSchedule                 = "0 */1 * * *"
	DefaultDeltaSnapshotPeriod      = 20 * time.Second
	DefaultDeltaSnapshotMemoryLimit = 100 << 20
	DefaultGarbageCollectionPeriod  = time.Minute
	DefaultMaxBackups               = 7
)

// GCPolicy selects which old snapshots garbage collection deletes.
type GCPolicy string

const (
	// GCExponential keeps the current hour, then the latest full snapshot per hour for 24 hours, per
	// day for 7 days and per week for 4 weeks.
	GCExponential GCPolicy = "Exponential"
	// GCLimitBased keeps the newest MaxBackups full snapshots.
	GCLimitBased GCPolicy = "LimitBased"
)

// Config is the snapshotter's configuration; the flags of `etcdbrctl server` bind to it.
type Config struct {
	// Schedule is the cron schedule of full snapshots (--schedule), 5 fields.
	Schedule string
	// DeltaSnapshotPeriod is how often a delta is cut (--delta-snapshot-period); 0 disables deltas.
	DeltaSnapshotPeriod time.Duration
	// DeltaSnapshotMemoryLimit cuts a delta early once the buffered events reach this many bytes
	// (--delta-snapshot-memory-limit).
	DeltaSnapshotMemoryLimit int64
	// GarbageCollectionPolicy is Exponential or LimitBased (--garbage-collection-policy).
	GarbageCollectionPolicy GCPolicy
	// MaxBackups is the number of full snapshots LimitBased keeps (--max-backups).
	MaxBackups int
	// GarbageCollectionPeriod is how often garbage is collected (--garbage-collection-period); 0 disables it.
	GarbageCollectionPeriod time.Duration
	// DeltaSnapshotRetentionPeriod keeps every delta created within this period, besides those the policy
	// keeps (--delta-snapshot-retention-period, the upstream sidecar's flag for point-in-time restores
	// further back); 0 keeps only the policy's.
	DeltaSnapshotRetentionPeriod time.Duration
	// Compression of new snapshots (--compress-snapshots, --compression-policy); none if empty.
	Compression snapshot.Compression
}

// Default returns the configuration of the upstream sidecar's defaults, with gzip compression.
func Default() Config {
	return Config{
		Schedule:                 DefaultSchedule,
		DeltaSnapshotPeriod:      DefaultDeltaSnapshotPeriod,
		DeltaSnapshotMemoryLimit: DefaultDeltaSnapshotMemoryLimit,
		GarbageCollectionPolicy:  GCExponential,
		MaxBackups:               DefaultMaxBackups,
		GarbageCollectionPeriod:  DefaultGarbageCollectionPeriod,
		Compression:              snapshot.CompressionGzip,
	}
}

// OneShot is the configuration of a snapshotter that only takes the snapshots it is asked for (TakeFull),
// compressed as given: no schedule, no delta snapshots, no garbage collection — for the tools that store one
// full snapshot through the sidecar's own pipeline (etcdbrctl snapshot and preserve-data, the compactor).
func OneShot(compression snapshot.Compression) Config {
	cfg := Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod, cfg.Compression = "", 0, 0, compression
	return cfg
}

// Validate rejects configurations that would silently not back up.
func (c Config) Validate() error {
	var errs []error
	if c.Schedule != "" {
		if _, err := cron.ParseStandard(c.Schedule); err != nil {
			errs = append(errs, fmt.Errorf("schedule %q: %w", c.Schedule, err))
		}
	}
	if c.DeltaSnapshotPeriod < 0 || (c.DeltaSnapshotPeriod > 0 && c.DeltaSnapshotPeriod < time.Second) {
		errs = append(errs, fmt.Errorf("delta snapshot period %s must be 0 (disabled) or at least 1s", c.DeltaSnapshotPeriod))
	}
	if c.DeltaSnapshotMemoryLimit <= 0 {
		errs = append(errs, fmt.Errorf("delta snapshot memory limit must be positive, got %d", c.DeltaSnapshotMemoryLimit))
	}
	switch c.GarbageCollectionPolicy {
	case GCExponential:
	case GCLimitBased:
		if c.MaxBackups < 1 {
			errs = append(errs, fmt.Errorf("garbage collection policy %s needs max backups >= 1, got %d", GCLimitBased, c.MaxBackups))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown garbage collection policy %q (want %s or %s)", c.GarbageCollectionPolicy, GCExponential, GCLimitBased))
	}
	if c.GarbageCollectionPeriod < 0 {
		errs = append(errs, fmt.Errorf("garbage collection period must not be negative"))
	}
	if c.DeltaSnapshotRetentionPeriod < 0 {
		errs = append(errs, fmt.Errorf("delta snapshot retention period must not be negative"))
	}
	if c.Compression != snapshot.CompressionNone {
		if _, err := snapshot.ParseCompressionPolicy(string(c.Compression)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
