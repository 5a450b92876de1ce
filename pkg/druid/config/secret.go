package config

import "fmt"

// DefaultSecretWorkers is how many Secrets are reconciled in parallel. Each reconcile is one index lookup and at
// most one metadata patch, so a few workers keep up with a whole seed.
const DefaultSecretWorkers = 3

// SecretController configures the secret finalizer controller.
type SecretController struct {
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int
}

// Default fills unset fields with their defaults.
func (c *SecretController) Default() {
	if c.Workers == 0 {
		c.Workers = DefaultSecretWorkers
	}
}

// Validate rejects a configuration the controller cannot run with.
func (c SecretController) Validate() error {
	if c.Workers < 1 {
		return fmt.Errorf("secret controller: workers must be at least 1, got %d", c.Workers)
	}
	return nil
}
