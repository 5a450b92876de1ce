package config

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of the EtcdOpsTask controller.
const (
	// DefaultEtcdOpsTaskWorkers is how many tasks run in parallel; a task blocks its worker while the
	// sidecar takes the snapshot (up to the task's timeout), and tasks of one Etcd never run in parallel.
	DefaultEtcdOpsTaskWorkers = 3
	// DefaultEtcdOpsTaskRetryInterval is the wait before a snapshot request that did not reach the sidecar
	// (connection refused, TLS secrets unreadable) is sent again, within the task's timeout.
	DefaultEtcdOpsTaskRetryInterval = 5 * time.Second
	// DefaultEtcdOpsTaskMinInterval is the least time between the starts of two tasks of the same kind
	// (full, final full, delta) of one Etcd.
	DefaultEtcdOpsTaskMinInterval = time.Minute
)

// EtcdOpsTaskController configures the EtcdOpsTask controller.
type EtcdOpsTaskController struct {
	// Enabled runs the controller. It is on by default: the CRD is installed with druid, and a task nobody
	// runs would stay without a state until someone deletes it.
	Enabled bool
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
	// RetryInterval is the wait before a snapshot request that did not reach the sidecar is retried.
	RetryInterval time.Duration
	// MinInterval is the least time between the starts of two tasks of the same kind of one Etcd; a task
	// sooner is Rejected (ERR_TOO_FREQUENT). Every snapshot streams the whole database (full) or loads the
	// backup leader and the store, so tasks created in a loop must not turn into a snapshot loop.
	MinInterval time.Duration
}

// DefaultEtcdOpsTaskController is the controller's configuration before flags and the config file.
func DefaultEtcdOpsTaskController() EtcdOpsTaskController {
	c := EtcdOpsTaskController{Enabled: true}
	c.Default()
	return c
}

// Default fills unset fields with their defaults; Enabled stays as given.
func (c *EtcdOpsTaskController) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultEtcdOpsTaskWorkers
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = DefaultEtcdOpsTaskRetryInterval
	}
	if c.MinInterval == 0 {
		c.MinInterval = DefaultEtcdOpsTaskMinInterval
	}
}

// Validate rejects a configuration the controller cannot run with, naming every offending field.
func (c EtcdOpsTaskController) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("etcd-ops-task controller: workers must be at least 1, got %d", c.Workers))
	}
	if c.RetryInterval <= 0 {
		errs = append(errs, fmt.Errorf("etcd-ops-task controller: retryInterval must be positive, got %s", c.RetryInterval))
	}
	if c.MinInterval < 0 {
		errs = append(errs, fmt.Errorf("etcd-ops-task controller: minInterval must not be negative, got %s", c.MinInterval))
	}
	return errors.Join(errs...)
}
