package podwire

// The flag names on this page are the ones both sides must agree on: druid renders them into the pod's
// containers and its Jobs, and our binaries (etcdbrctl, etcd-wrapper) define them. The upstream
// etcd-backup-restore and etcd-wrapper images take the same spellings, so that druid runs either image;
// flags only the upstream binaries mean something by are still defined by ours, which accept and ignore
// them (package ignoredflags). A changed spelling breaks pods and Jobs rendered by the upstream druid.
//
// Flags a binary defines but druid never renders (local settings, test knobs) are spelled where they are
// defined.

// Arg is the command-line argument that sets the flag name to value: --name=value.
func Arg(name, value string) string { return "--" + name + "=" + value }

// Flags of the surviving-data Jobs (CommandDataRevision, CommandPreserveData): druid renders them and
// etcdbrctl defines them.
const (
	// FlagDataDir is etcd's data directory, only read by the Jobs. `etcdbrctl server` and `etcdbrctl
	// compact` take it too (the member's data directory, and the compaction's scratch one).
	FlagDataDir = "data-dir"
	// FlagScratchDir holds the copy of the data the Jobs' throwaway etcd runs on.
	FlagScratchDir = "scratch-dir"
	// FlagTerminationMessagePath is the file the Job's result is written to besides stdout.
	FlagTerminationMessagePath = "termination-message-path"
	// FlagOwner is the Etcd ("<namespace>/<name>") the data must belong to.
	FlagOwner = "owner"
	// FlagExpectRevision is the revision preserve-data must find in the data.
	FlagExpectRevision = "expect-revision"
)

// Flags that locate a store and compress snapshots, shared by `etcdbrctl server`, `compact` and `copy`
// (package storeflags). The store location flags take FlagPrefixSource for the store `copy` reads from.
const (
	// FlagStorageProvider is the store's provider.
	FlagStorageProvider = "storage-provider"
	// FlagStoreContainer is the bucket or container.
	FlagStoreContainer = "store-container"
	// FlagStorePrefix is the path of the cluster's snapshots inside the container.
	FlagStorePrefix = "store-prefix"
	// FlagStoreEndpointOverride replaces the provider's endpoint.
	FlagStoreEndpointOverride = "store-endpoint-override"
	// FlagPrefixSource prefixes the location flags of the store `etcdbrctl copy` reads from.
	FlagPrefixSource = "source-"

	// FlagRestoreSourceStorePrefix is the prefix, in the same store, of another cluster's backups that a
	// NEW cluster's first member restores from while its own prefix holds no backup yet (`etcdbrctl server`).
	FlagRestoreSourceStorePrefix = "restore-source-store-prefix"
	// FlagRestoreSourceRevision is the revision that restore ends at (exact); none: the latest.
	FlagRestoreSourceRevision = "restore-source-revision"
	// FlagRestoreSourceTime (RFC3339) ends that restore at the newest snapshot taken at or before it.
	FlagRestoreSourceTime = "restore-source-time"

	// FlagCompressSnapshots compresses new snapshots.
	FlagCompressSnapshots = "compress-snapshots"
	// FlagCompressionPolicy is the codec of compressed snapshots.
	FlagCompressionPolicy = "compression-policy"
)

// Flags of `etcdbrctl server`, the backup-restore sidecar. The snapshot lease and timeout flags are
// `etcdbrctl compact`'s too, FlagEtcdSnapshotTimeout also preserve-data's.
const (
	FlagEndpoints               = "endpoints"
	FlagServiceEndpoints        = "service-endpoints"
	FlagInsecureTransport       = "insecure-transport"
	FlagInsecureSkipTLSVerify   = "insecure-skip-tls-verify"
	FlagCACert                  = "cacert"
	FlagCert                    = "cert"
	FlagKey                     = "key"
	FlagServerPort              = "server-port"
	FlagServerCert              = "server-cert"
	FlagServerKey               = "server-key"
	FlagServerCACert            = "server-cacert"
	FlagEnableProfiling         = "enable-profiling"
	FlagDefragmentationSchedule = "defragmentation-schedule"

	FlagEnableMemberLeaseRenewal   = "enable-member-lease-renewal"
	FlagK8sHeartbeatDuration       = "k8s-heartbeat-duration"
	FlagEnableSnapshotLeaseRenewal = "enable-snapshot-lease-renewal"
	FlagFullSnapshotLeaseName      = "full-snapshot-lease-name"
	FlagDeltaSnapshotLeaseName     = "delta-snapshot-lease-name"

	FlagSchedule                     = "schedule"
	FlagDeltaSnapshotPeriod          = "delta-snapshot-period"
	FlagDeltaSnapshotMemoryLimit     = "delta-snapshot-memory-limit"
	FlagGarbageCollectionPolicy      = "garbage-collection-policy"
	FlagMaxBackups                   = "max-backups"
	FlagGarbageCollectionPeriod      = "garbage-collection-period"
	FlagDeltaSnapshotRetentionPeriod = "delta-snapshot-retention-period"

	FlagEtcdSnapshotTimeout                 = "etcd-snapshot-timeout"
	FlagEtcdDefragTimeout                   = "etcd-defrag-timeout"
	FlagReelectionPeriod                    = "reelection-period"
	FlagEtcdConnectionTimeoutLeaderElection = "etcd-connection-timeout-leader-election"
)

// Flags druid renders only for the upstream etcd-backup-restore image (its sidecar and compaction Job):
// ours accepts and ignores them, except FlagEmbeddedEtcdQuotaBytes, which `etcdbrctl compact` takes as its
// private etcd's quota.
const (
	FlagUseEtcdWrapper              = "use-etcd-wrapper"
	FlagRestorationTempSnapshotsDir = "restoration-temp-snapshots-dir"
	FlagSnapstoreTempDirectory      = "snapstore-temp-directory"
	FlagEmbeddedEtcdQuotaBytes      = "embedded-etcd-quota-bytes"
	FlagAutoCompactionMode          = "auto-compaction-mode"
	FlagAutoCompactionRetention     = "auto-compaction-retention"
)

// Flags of `etcdbrctl copy` besides the store flags.
const (
	FlagMaxBackupAge                = "max-backup-age"
	FlagMaxBackupsToCopy            = "max-backups-to-copy"
	FlagWaitForFinalSnapshot        = "wait-for-final-snapshot"
	FlagWaitForFinalSnapshotTimeout = "wait-for-final-snapshot-timeout"
)

// Flags of `etcd-wrapper start-etcd`. FlagEtcdClientPort is rendered for the upstream wrapper only; ours
// accepts and ignores it.
const (
	FlagBackupRestoreHostPort         = "backup-restore-host-port"
	FlagBackupRestoreTLSEnabled       = "backup-restore-tls-enabled"
	FlagBackupRestoreCACertBundlePath = "backup-restore-ca-cert-bundle-path"
	FlagEtcdServerName                = "etcd-server-name"
	FlagEtcdClientCertPath            = "etcd-client-cert-path"
	FlagEtcdClientKeyPath             = "etcd-client-key-path"
	FlagEtcdWrapperPort               = "etcd-wrapper-port"
	FlagEtcdClientPort                = "etcd-client-port"
	FlagStepEtcd35Binary              = "step-etcd-3.5-binary"
	FlagStepEtcd36Binary              = "step-etcd-3.6-binary"
	FlagHoldEtcdVersion               = "hold-etcd-version"
)
