// Package operation implements the conventions every extension controller of a Gardener landscape follows, so
// that gardenlet can drive our BackupBucket and BackupEntry controllers like any provider extension: when to
// reconcile (generation changed or `gardener.cloud/operation: reconcile`), migrate (`migrate`, the source seed
// of a control-plane migration) and restore (`restore`), which operation a reconcile performs and when a
// migrated object is left alone (Type, Skip), how to report progress (`status.lastOperation`,
// `status.lastError`, `status.observedGeneration`) and how to acknowledge the operation annotation.
package operation
