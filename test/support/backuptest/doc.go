// Package backuptest holds what the backup and restore tests share: stores on a real directory and on
// real S3, Azure Blob Storage and GCS servers, and a comparison of etcd contents that includes every
// revision field.
package backuptest
