// Package config holds etcd-druid's controller configuration: plain structs with their defaults and their
// validation next to them, so that the binary's flags, a config file and the tests all fill the same
// struct and get the same defaults.
package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

// Defaults of the Etcd controller (upstream etcd-druid's defaults).
const (
	// DefaultEtcdWorkers is how many Etcds are reconciled in parallel.
	DefaultEtcdWorkers = 3
	// DefaultEtcdStatusSyncPeriod is the custodian period: how often the status is refreshed from the
	// member leases even when no watch event arrives (member health degrades with time alone).
	DefaultEtcdStatusSyncPeriod = 15 * time.Second
	// DefaultEtcdMemberUnknownThreshold is how long after its last lease renewal a member becomes Unknown.
	DefaultEtcdMemberUnknownThreshold = time.Minute
	// DefaultEtcdMemberNotReadyThreshold is how long an Unknown member stays Unknown before it is NotReady.
	DefaultEtcdMemberNotReadyThreshold = 5 * time.Minute
	// DefaultFullSnapshotRefusalGrace is how long a sidecar that refuses druid's request for a full snapshot
	// (401/403) holds hibernation or new images before they go ahead without the snapshot.
	DefaultFullSnapshotRefusalGrace = 15 * time.Minute
	// DefaultNodeUnreachableGrace is how long a node must have been unreachable (NotReady with the
	// node.kubernetes.io/unreachable taint) before druid counts a member volume bound to it as lost and
	// relocates the member. Twice the default pod eviction of an unreachable node (5 min), so that a
	// node that only rebooted or lost its network for a while gets its members back with their data.
	DefaultNodeUnreachableGrace = 10 * time.Minute
)

// Images are the container images druid puts into the StatefulSet unless an Etcd pins its own.
type Images struct {
	// EtcdWrapper is the image of the `etcd` container (etcd-wrapper).
	EtcdWrapper string
	// BackupRestore is the image of the `backup-restore` container (etcdbrctl).
	BackupRestore string
	// Compatibility tells, per image (these or an Etcd's own), whether it runs our binaries or the
	// upstream Gardener ones, which decides the flags and probes druid renders for it.
	Compatibility imagecaps.Config
}

// EtcdController configures druid's Etcd controller (spec, status and deletion flows).
type EtcdController struct {
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
	// EnableEtcdSpecAutoReconcile runs a spec reconcile on every generation change. When false (the
	// default, as Gardener expects), a spec reconcile only runs when the Etcd carries the operation
	// annotation `reconcile` or was never reconciled, so that Gardener decides when clusters roll.
	EnableEtcdSpecAutoReconcile bool
	// StatusSyncPeriod is how often the status flow runs per Etcd without any event.
	StatusSyncPeriod time.Duration
	// EtcdMemberUnknownThreshold: a member whose lease was not renewed for this long is Unknown
	// (or NotReady when its pod is not ready).
	EtcdMemberUnknownThreshold time.Duration
	// EtcdMemberNotReadyThreshold: a member that stayed unrenewed for Unknown + this long is NotReady.
	EtcdMemberNotReadyThreshold time.Duration
	// FullSnapshotRefusalGrace: a sidecar that refuses druid's request for the full snapshot before
	// hibernation or new images (401/403: a certificate it does not accept, an image that authenticates
	// otherwise) holds the update this long, and at least three attempts; then the update goes ahead without
	// the snapshot, as the volumes stay and the sidecar keeps uploading deltas.
	FullSnapshotRefusalGrace time.Duration
	// NodeUnreachableGrace: a member volume bound to nodes that have all been unreachable this long counts
	// as lost, and the member is relocated (a volume bound to nodes that no longer exist is lost at once).
	NodeUnreachableGrace time.Duration
	// Images are passed to the StatefulSet component.
	Images Images
	// LocalBackup limits the node directories a Local backup store may mount (the compaction and
	// copy-backups controllers get the same limit).
	LocalBackup LocalBackup
	// BackupPortAccess names the namespaces the NetworkPolicy admits to the members' backup-restore port.
	BackupPortAccess BackupPortAccess
}

// Default fills every zero field with its default; it never overrides a set value, so that a partly
// filled struct (from flags or a file) keeps what the operator chose.
func (c *EtcdController) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultEtcdWorkers
	}
	if c.StatusSyncPeriod == 0 {
		c.StatusSyncPeriod = DefaultEtcdStatusSyncPeriod
	}
	if c.EtcdMemberUnknownThreshold == 0 {
		c.EtcdMemberUnknownThreshold = DefaultEtcdMemberUnknownThreshold
	}
	if c.EtcdMemberNotReadyThreshold == 0 {
		c.EtcdMemberNotReadyThreshold = DefaultEtcdMemberNotReadyThreshold
	}
	if c.FullSnapshotRefusalGrace == 0 {
		c.FullSnapshotRefusalGrace = DefaultFullSnapshotRefusalGrace
	}
	if c.NodeUnreachableGrace == 0 {
		c.NodeUnreachableGrace = DefaultNodeUnreachableGrace
	}
	c.Images.Compatibility.Default()
}

// Validate rejects a configuration the controller cannot run with, naming every offending field at once,
// so that druid fails at start-up rather than reconciling with nonsense periods or without images.
func (c EtcdController) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("etcd controller: workers must be at least 1, got %d", c.Workers))
	}
	for name, d := range map[string]time.Duration{
		"statusSyncPeriod":            c.StatusSyncPeriod,
		"etcdMemberUnknownThreshold":  c.EtcdMemberUnknownThreshold,
		"etcdMemberNotReadyThreshold": c.EtcdMemberNotReadyThreshold,
		"fullSnapshotRefusalGrace":    c.FullSnapshotRefusalGrace,
		"nodeUnreachableGrace":        c.NodeUnreachableGrace,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("etcd controller: %s must be positive, got %s", name, d))
		}
	}
	if c.Images.EtcdWrapper == "" {
		errs = append(errs, errors.New("etcd controller: images.etcdWrapper must be set"))
	}
	if c.Images.BackupRestore == "" {
		errs = append(errs, errors.New("etcd controller: images.backupRestore must be set"))
	}
	errs = append(errs, c.Images.Compatibility.Validate(), c.LocalBackup.Validate(), c.BackupPortAccess.Validate())
	return errors.Join(errs...)
}
