// Package backupsecret is the one description of the backup secret: the data keys each storage provider
// reads, which of them a secret must hold, and the environment variables through which the sidecar finds
// them. The sidecar's secret parsers (package snapstore), druid's SecretsReady check and the Gardener side's
// secret check before Deploy all use it, so that a key is spelled once and a secret the sidecar would
// reject is reported before any pod starts, naming the missing key.
//
// The keys are those of the upstream components (upstream
// etcd-backup-restore's parsers); the package imports only the API types, so every side can depend on it.
package backupsecret
