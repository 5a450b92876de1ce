// Package operation implements the conventions every extension controller of a Gardener landscape follows, so
// that gardenlet can drive our BackupBucket and BackupEntry controllers like any provider extension: when to
// reconcile (generation changed or `gardener.cloud/operation: reconcile`), how to report progress
// (`status.lastOperation`, `status.lastError`, `status.observedGeneration`) and how to acknowledge the
// operation annotation.
package operation
