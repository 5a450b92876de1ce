package app

import (
	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// deprecatedUpstreamRepositoriesFlag is the former name of --upstream-image-repositories, still accepted.
const deprecatedUpstreamRepositoriesFlag = "deployed-image-repositories"

// bindFlags binds every setting of c to a flag of fs (the log settings are the --zap-* flags, bound in
// NewCommand). The same binding serves the command line and the
// re-application of the flags that were set on top of a --config file (see applySetFlags).
func bindFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "path of a kubeconfig (default: in-cluster or $KUBECONFIG)")
	fs.Float32Var(&c.ClientConnection.QPS, "kube-api-qps", c.ClientConnection.QPS, "sustained requests per second to the apiserver (negative: no client-side limit)")
	fs.IntVar(&c.ClientConnection.Burst, "kube-api-burst", c.ClientConnection.Burst, "requests that may go to the apiserver at once above --kube-api-qps")
	fs.BoolVar(&c.LeaderElection, "leader-election", c.LeaderElection, "elect a leader among druid replicas (Lease "+LeaderElectionID+")")
	fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", c.LeaderElectionNamespace, "namespace of the leader election Lease (default: druid's namespace)")
	fs.StringVar(&c.LeaderElectionID, "leader-election-id", c.LeaderElectionID, "name of the leader election Lease")
	fs.StringVar(&c.LeaderElectionResourceLock, "leader-election-resource-lock", c.LeaderElectionResourceLock, `kind of the leader election lock (only "leases")`)
	fs.DurationVar(&c.LeaderElectionLeaseDuration, "leader-election-lease-duration", c.LeaderElectionLeaseDuration, "how long the leader election Lease holds without renewal")
	fs.DurationVar(&c.LeaderElectionRenewDeadline, "leader-election-renew-deadline", c.LeaderElectionRenewDeadline, "how long the leader tries to renew the Lease before it stops leading")
	fs.DurationVar(&c.LeaderElectionRetryPeriod, "leader-election-retry-period", c.LeaderElectionRetryPeriod, "how often the replicas try to acquire or renew the Lease")
	fs.StringVar(&c.MetricsBindAddress, "metrics-bind-address", c.MetricsBindAddress, `address of the metrics endpoint ("0" disables it)`)
	fs.StringVar(&c.HealthProbeBindAddress, "health-probe-bind-address", c.HealthProbeBindAddress, `address of /healthz and /readyz ("0" disables them)`)
	fs.DurationVar(&c.GracefulShutdownTimeout, "graceful-shutdown-timeout", c.GracefulShutdownTimeout, "how long running reconciles may take after SIGTERM")

	e := &c.Etcd
	fs.IntVar(&e.Workers, "etcd-workers", e.Workers, "Etcds reconciled in parallel")
	fs.BoolVar(&e.EnableEtcdSpecAutoReconcile, "enable-etcd-spec-auto-reconcile", e.EnableEtcdSpecAutoReconcile,
		"reconcile every spec change; when false only Etcds annotated gardener.cloud/operation=reconcile are")
	fs.DurationVar(&e.StatusSyncPeriod, "etcd-status-sync-period", e.StatusSyncPeriod, "how often each Etcd's status is refreshed without events")
	fs.DurationVar(&e.EtcdMemberUnknownThreshold, "etcd-member-unknown-threshold", e.EtcdMemberUnknownThreshold, "lease age after which a member is Unknown")
	fs.DurationVar(&e.EtcdMemberNotReadyThreshold, "etcd-member-notready-threshold", e.EtcdMemberNotReadyThreshold,
		"how long a member stays Unknown before it is NotReady; also the grace period before druid acts on a NotReady member")
	fs.DurationVar(&e.FullSnapshotRefusalGrace, "full-snapshot-refusal-grace", e.FullSnapshotRefusalGrace,
		"how long a sidecar that refuses druid's full snapshot request (401/403) holds hibernation or new images before they go ahead without it")
	fs.DurationVar(&e.NodeUnreachableGrace, "node-unreachable-grace", e.NodeUnreachableGrace,
		"how long the nodes a member's volume is bound to must have been unreachable before druid replaces the member elsewhere")
	fs.StringVar(&e.Images.EtcdWrapper, "etcd-wrapper-image", e.Images.EtcdWrapper, "image of the etcd container (etcd-wrapper)")
	fs.StringVar(&e.Images.BackupRestore, "backup-restore-image", e.Images.BackupRestore, "image of the backup-restore container and of the compaction and copy Jobs")
	fs.Var(&e.Images.Compatibility.Mode, "image-compatibility",
		`whose binaries the etcdbrctl and etcd-wrapper images run, which decides the flags and probes druid renders for them: "ours", "upstream" (Gardener's etcd-backup-restore and etcd-wrapper; "deployed" is accepted as its former spelling) or "auto" (by repository, see --upstream-image-repositories)`)
	fs.StringVar(&e.Images.Compatibility.UpstreamRepositories, "upstream-image-repositories", e.Images.Compatibility.UpstreamRepositories,
		"regular expression over an image's repository (without tag and digest) that makes it an upstream image under --image-compatibility=auto")
	// The former name of --upstream-image-repositories, bound to the same setting.
	fs.StringVar(&e.Images.Compatibility.UpstreamRepositories, deprecatedUpstreamRepositoriesFlag, e.Images.Compatibility.UpstreamRepositories,
		"former name of --upstream-image-repositories")
	_ = fs.MarkDeprecated(deprecatedUpstreamRepositoriesFlag, "use --upstream-image-repositories")
	fs.StringSliceVar(&e.LocalBackup.AllowedHostPaths, "local-backup-allowed-host-paths", e.LocalBackup.AllowedHostPaths,
		"node directories a Local backup store's hostPath may name, with everything below them (default "+config.DefaultLocalBackupHostPath+"; empty refuses the Local provider)")
	fs.StringVar(&e.BackupPortAccess.DruidNamespace, "druid-namespace", e.BackupPortAccess.DruidNamespace,
		"namespace of druid's own pods, the only one from which the Etcds' NetworkPolicies admit them to the backup-restore port (default: the namespace of druid's service account when in a pod)")
	fs.StringSliceVar(&e.BackupPortAccess.ClientNamespaces, "backup-port-client-namespaces", e.BackupPortAccess.ClientNamespaces,
		"namespaces whose pods labelled networking.resources.gardener.cloud/to-<etcd>-client-tcp-<port>=allowed or to-all-shoots-<etcd>-client-tcp-<port>=allowed may reach the backup-restore port besides the Etcd's own (default: --druid-namespace; empty: none, but pods of --druid-namespace with the to-all-shoots label still may)")

	fs.IntVar(&c.Secret.Workers, "secret-workers", c.Secret.Workers, "Secrets reconciled in parallel by the secret finalizer controller")
	fs.BoolVar(&c.Compaction.EnableBackupCompaction, "enable-backup-compaction", c.Compaction.EnableBackupCompaction, "run compaction Jobs when delta snapshots pile up")
	fs.IntVar(&c.Compaction.Workers, "compaction-workers", c.Compaction.Workers, "Etcds looked at in parallel by the compaction controller")
	fs.Int64Var(&c.Compaction.EventsThreshold, "compaction-events-threshold", c.Compaction.EventsThreshold, "delta events since the last full snapshot that trigger a compaction")
	fs.Int64Var(&c.Compaction.TriggerFullSnapshotThreshold, "compaction-trigger-full-snapshot-threshold", c.Compaction.TriggerFullSnapshotThreshold, "delta events since the last full snapshot beyond which a full snapshot is requested instead of a compaction")
	fs.DurationVar(&c.Compaction.ActiveDeadline, "compaction-active-deadline", c.Compaction.ActiveDeadline, "activeDeadlineSeconds of a compaction Job")
	fs.BoolVar(&c.EnableCopyBackupsTask, "enable-copy-backups-task", c.EnableCopyBackupsTask, "run the EtcdCopyBackupsTask controller")
	fs.IntVar(&c.CopyBackupsTask.Workers, "copy-backups-task-workers", c.CopyBackupsTask.Workers, "EtcdCopyBackupsTasks reconciled in parallel")
	fs.BoolVar(&c.EtcdOpsTask.Enabled, "enable-etcd-ops-task-controller", c.EtcdOpsTask.Enabled, "run EtcdOpsTasks (on-demand snapshots)")
	fs.DurationVar(&c.EtcdOpsTask.MinInterval, "etcd-ops-task-min-interval", c.EtcdOpsTask.MinInterval,
		"least time between the starts of two EtcdOpsTasks of the same kind (full, final full, delta) of one Etcd; sooner ones are rejected")
	fs.IntVar(&c.EtcdOpsTask.Workers, "etcd-ops-task-workers", c.EtcdOpsTask.Workers, "EtcdOpsTasks run in parallel (each holds its worker while the sidecar takes the snapshot)")

	w := &c.Webhooks
	fs.BoolVar(&w.Enabled, "enable-webhooks", w.Enabled, "run the webhook server with the Etcd validation webhook (and the component protection webhook unless --enable-etcd-component-protection=false)")
	fs.BoolVar(&w.ComponentProtection, "enable-etcd-component-protection", w.ComponentProtection,
		"serve the component protection webhook with the other webhooks; off, the Etcd validation webhook is still served")
	fs.StringVar(&w.Host, "webhook-host", w.Host, "address the webhook server binds to (default: every interface)")
	fs.IntVar(&w.Port, "webhook-port", w.Port, "port of the webhook server")
	fs.StringVar(&w.CertDir, "webhook-cert-dir", w.CertDir, "directory with tls.crt and tls.key of the webhook server")
	fs.StringVar(&w.ReconcilerServiceAccount, "reconciler-service-account", w.ReconcilerServiceAccount,
		"druid's own user (system:serviceaccount:<namespace>:<name>), allowed to change the components")
	fs.StringSliceVar(&w.ExemptServiceAccounts, "exempt-service-accounts", w.ExemptServiceAccounts, "further users allowed to change druid's components")
	fs.StringSliceVar(&w.PodControllerUsers, "pod-controller-users", w.PodControllerUsers,
		"users kube-controller-manager creates pods as (its StatefulSet controller's among them); the protection webhook configuration must name the same")
	fs.StringSliceVar(&w.GarbageCollectorUsers, "garbage-collector-users", w.GarbageCollectorUsers,
		"users kube-controller-manager's garbage collector runs as: only they (besides druid and the exempt users) take the orphan finalizer off a protected object")
}

// applySetFlags copies the flags that were set on the command line (set) onto c, so that they win over
// the --config file while unset flags leave the file's values alone.
func applySetFlags(set *pflag.FlagSet, c *Config) error {
	bound := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	bindFlags(bound, c)
	var err error
	set.Visit(func(f *pflag.Flag) {
		target := bound.Lookup(f.Name)
		if target == nil || err != nil {
			return // flags that are not settings (--config, logging)
		}
		if from, ok := f.Value.(pflag.SliceValue); ok {
			err = target.Value.(pflag.SliceValue).Replace(from.GetSlice())
			return
		}
		err = target.Value.Set(f.Value.String())
	})
	return err
}
