// Package snapstore keeps the sidecar's snapshots in an object store. One interface serves every
// provider — a directory (Local), S3 and S3-compatible servers, Alibaba Cloud OSS, Dell ECS and OpenShift
// OCS (all three through the S3 API, each with its own secret format), Azure Blob Storage (ABS) and Google
// Cloud Storage (GCS) — so the snapshotter, restorer and garbage collector never know where backups
// live. All providers are gocloud.dev/blob drivers: uploads stream from the caller's reader (the S3
// driver cuts it into parts uploaded in parallel), nothing is staged in memory or on local disk.
//
// A store is configured like the upstream sidecar: provider, container and prefix from the command
// line, credentials from the backup secret mounted as a directory with one file per key.
package snapstore
