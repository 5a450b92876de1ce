// Package backupentry is the BackupEntry controller of the backup extension. For every entry it writes the
// etcd backup secret into the shoot's control-plane namespace (the entry credentials, `bucketName` and the
// provider's keys), exposes that secret's reference in status.etcdBackupSecretRef so the Gardener side need
// not guess its name, and on deletion removes the secret — only if this entry wrote it — and
// the entry's objects in the bucket, with the entry secret's static keys or its workload identity's token
// (kept, with a warning event, when the entry secret is gone). A migrated entry
// (`gardener.cloud/operation: migrate`) keeps both, and its deletion removes neither.
package backupentry

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "backupentry"

// Options configure the controller.
type Options struct {
	// Options are the settings every extension controller has (providers, parallelism).
	controller.Options
}
