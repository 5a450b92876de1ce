// Package backupbucket is the BackupBucket controller of the backup extension: it creates the seed's backup
// bucket in the provider's store, writes the generated bucket secret gardenlet expects
// (`generated-bucket-<name>` in `garden` or the namespace GeneratedSecretNamespaceAnnotation names, referenced
// by status.generatedSecretRef) and deletes the bucket when the
// BackupBucket goes away — unless it was migrated (`gardener.cloud/operation: migrate`) before.
package backupbucket

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "backupbucket"

// DefaultGeneratedSecretNamespace is where gardenlet keeps the bucket secrets of a seed.
const DefaultGeneratedSecretNamespace = "garden"

// GeneratedSecretName is the secret the extension generates for a bucket.
func GeneratedSecretName(bucket string) string { return "generated-bucket-" + bucket }

// Options configure the controller.
type Options struct {
	// Options are the settings every extension controller has (providers, parallelism).
	controller.Options
	// GeneratedSecretNamespace is where generated bucket secrets are written (DefaultGeneratedSecretNamespace
	// when empty).
	GeneratedSecretNamespace string
	// AllowedGeneratedSecretNamespaces are further namespaces a BackupBucket may name for its generated
	// secret with GeneratedSecretNamespaceAnnotation.
	AllowedGeneratedSecretNamespaces []string
}

func (o Options) withDefaults() Options {
	if o.GeneratedSecretNamespace == "" {
		o.GeneratedSecretNamespace = DefaultGeneratedSecretNamespace
	}
	return o
}
