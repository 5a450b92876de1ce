// Package validation checks Etcd and EtcdCopyBackupsTask objects. The CRDs enforce the same rules where a
// schema or CEL can express them; this package adds what they cannot (cron syntax, label syntax, name
// lengths) and is what druid's validating webhook and the Gardener-side component call. Every error names
// the field and says what is allowed.
package validation
