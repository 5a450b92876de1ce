package secret

import "fmt"

// DefaultWorkers is how many Secrets are reconciled in parallel. Each reconcile is one index lookup and at
// most one metadata patch, so a few workers keep up with a whole seed.
const DefaultWorkers = 3

// Config configures the secret finalizer controller.
type Config struct {
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
}

// Default fills unset fields with their defaults.
func (c *Config) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
}

// Validate rejects a configuration the controller cannot run with.
func (c Config) Validate() error {
	if c.Workers < 1 {
		return fmt.Errorf("secret controller: workers must be at least 1, got %d", c.Workers)
	}
	return nil
}
