// Package backupbucket is the BackupBucket controller of the backup extension: it creates the seed's backup
// bucket in the provider's store, writes the generated bucket secret gardenlet expects
// (`garden/generated-bucket-<name>`, referenced by status.generatedSecretRef) and deletes the bucket when the
// BackupBucket goes away.
package backupbucket

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "backupbucket"

// DefaultGeneratedSecretNamespace is where gardenlet keeps the bucket secrets of a seed.
const DefaultGeneratedSecretNamespace = "garden"

// GeneratedSecretName is the secret the extension generates for a bucket.
func GeneratedSecretName(bucket string) string { return "generated-bucket-" + bucket }

// Options configure the controller.
type Options struct {
	// Providers are the provider types the controller handles (the built-in local and s3 when nil).
	Providers provider.Registry
	// LocalRoot is the default directory of local buckets, used when Providers is nil.
	LocalRoot string
	// GeneratedSecretNamespace is where generated bucket secrets are written (DefaultGeneratedSecretNamespace
	// when empty).
	GeneratedSecretNamespace string
	// MaxConcurrentReconciles bounds parallel reconciles (1 when zero).
	MaxConcurrentReconciles int
}

func (o Options) withDefaults() Options {
	if o.Providers == nil {
		o.Providers = builtin.Providers(o.LocalRoot)
	}
	if o.GeneratedSecretNamespace == "" {
		o.GeneratedSecretNamespace = DefaultGeneratedSecretNamespace
	}
	if o.MaxConcurrentReconciles == 0 {
		o.MaxConcurrentReconciles = 1
	}
	return o
}
