// Package backuptest holds what the backup and restore tests share: stores on a real directory and
// on a real S3 server, and a comparison of etcd contents that includes every revision field.
package backuptest
