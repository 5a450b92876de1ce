package statefulset

import (
	"fmt"
	"strconv"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupRestoreArgs are the arguments of `etcdbrctl server` derived from the spec, with the flags of
// shared/reference/backup-restore.md. Optional settings are only passed when set, so that the sidecar's own
// defaults apply otherwise. The order is fixed, which keeps the pod template stable.
func BackupRestoreArgs(etcd *druidv1alpha1.Etcd) []string {
	spec := etcd.Spec
	clientScheme := etcdpod.Scheme(spec.Etcd.ClientUrlTLS != nil)
	args := []string{
		"server",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=" + spec.Etcd.HeartbeatDuration.Duration.String(),
		"--data-dir=" + etcdpod.DataDir,
		fmt.Sprintf("--endpoints=%s://%s:%d", clientScheme, etcdpod.LocalHostName(etcd.Name), *spec.Etcd.ClientPort),
		fmt.Sprintf("--service-endpoints=%s://%s.%s.svc:%d", clientScheme, etcd.ClientServiceName(), etcd.Namespace, *spec.Etcd.ClientPort),
		fmt.Sprintf("--server-port=%d", *spec.Backup.Port),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil {
		args = append(args,
			"--insecure-transport=false",
			"--cacert="+etcdpod.ClientCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
		if tls.ClientTLSSecretRef.Name != "" {
			args = append(args,
				"--cert="+etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSCertKey,
				"--key="+etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSKeyKey)
		}
	} else {
		args = append(args, "--insecure-transport=true")
	}
	if tls := spec.Backup.TLS; tls != nil {
		// The CA also verifies the backup leader's sidecar when this one forwards a snapshot request to it.
		args = append(args,
			"--server-cert="+etcdpod.BackupServerTLSMountPath+"/"+etcdpod.TLSCertKey,
			"--server-key="+etcdpod.BackupServerTLSMountPath+"/"+etcdpod.TLSKeyKey,
			"--server-cacert="+etcdpod.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
	}
	if s := spec.Etcd.DefragmentationSchedule; s != nil && *s != "" {
		args = append(args, "--defragmentation-schedule="+*s)
	}
	args = append(args, tuningArgs(etcd)...)
	return append(args, storeArgs(etcd)...)
}

// tuningArgs are the sidecar's timeouts, leader election and profiling, as the deployed druid passes them:
// each when the spec sets it (the API defaults both timeouts to 15m, the deployed sidecar's values; ours
// would otherwise bound a member's defragmentation at 8m).
func tuningArgs(etcd *druidv1alpha1.Etcd) []string {
	var args []string
	duration := func(flag string, d *metav1.Duration) {
		if d != nil {
			args = append(args, "--"+flag+"="+d.Duration.String())
		}
	}
	duration("etcd-defrag-timeout", etcd.Spec.Etcd.EtcdDefragTimeout)
	duration("etcd-snapshot-timeout", etcd.Spec.Backup.EtcdSnapshotTimeout)
	if le := etcd.Spec.Backup.LeaderElection; le != nil {
		duration("reelection-period", le.ReelectionPeriod)
		duration("etcd-connection-timeout-leader-election", le.EtcdConnectionTimeout)
	}
	if p := etcd.Spec.Backup.EnableProfiling; p != nil && *p {
		args = append(args, "--enable-profiling=true")
	}
	return args
}

// storeArgs are the snapshot and store flags; without a store the sidecar takes no snapshots and renews no
// snapshot leases.
func storeArgs(etcd *druidv1alpha1.Etcd) []string {
	backup := etcd.Spec.Backup
	store := backup.Store
	if store == nil {
		return nil
	}
	args := []string{
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=" + etcd.FullSnapshotLeaseName(),
		"--delta-snapshot-lease-name=" + etcd.DeltaSnapshotLeaseName(),
	}
	args = append(args, StoreLocationArgs(store, "")...)
	if backup.FullSnapshotSchedule != nil && *backup.FullSnapshotSchedule != "" {
		args = append(args, "--schedule="+*backup.FullSnapshotSchedule)
	}
	if backup.DeltaSnapshotPeriod != nil {
		args = append(args, "--delta-snapshot-period="+backup.DeltaSnapshotPeriod.Duration.String())
	}
	if backup.DeltaSnapshotMemoryLimit != nil {
		args = append(args, "--delta-snapshot-memory-limit="+strconv.FormatInt(backup.DeltaSnapshotMemoryLimit.Value(), 10))
	}
	if backup.GarbageCollectionPolicy != nil {
		args = append(args, "--garbage-collection-policy="+string(*backup.GarbageCollectionPolicy))
		if *backup.GarbageCollectionPolicy == druidv1alpha1.GarbageCollectionPolicyLimitBased && backup.MaxBackupsLimitBasedGC != nil {
			args = append(args, fmt.Sprintf("--max-backups=%d", *backup.MaxBackupsLimitBasedGC))
		}
	}
	if backup.GarbageCollectionPeriod != nil {
		args = append(args, "--garbage-collection-period="+backup.GarbageCollectionPeriod.Duration.String())
	}
	if backup.DeltaSnapshotRetentionPeriod != nil && backup.DeltaSnapshotRetentionPeriod.Duration > 0 {
		args = append(args, "--delta-snapshot-retention-period="+backup.DeltaSnapshotRetentionPeriod.Duration.String())
	}
	return append(args, CompressionArgs(backup)...)
}

// EtcdWrapperArgs are the arguments of the etcd wrapper (container `etcd`): where to reach the sidecar
// (through the hostAlias, with its CA when the sidecar serves TLS), the name etcd's certificate is valid
// for, the client certificate for its own health checks, and the port of /readyz and /stop.
func EtcdWrapperArgs(etcd *druidv1alpha1.Etcd) []string {
	spec := etcd.Spec
	args := []string{
		"start-etcd",
		fmt.Sprintf("--backup-restore-host-port=%s:%d", etcdpod.LocalHostName(etcd.Name), *spec.Backup.Port),
		"--etcd-server-name=" + etcdpod.LocalHostName(etcd.Name),
		fmt.Sprintf("--etcd-wrapper-port=%d", *spec.Etcd.WrapperPort),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil && tls.ClientTLSSecretRef.Name != "" {
		args = append(args,
			"--etcd-client-cert-path="+etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSCertKey,
			"--etcd-client-key-path="+etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSKeyKey)
	}
	if tls := spec.Backup.TLS; tls != nil {
		args = append(args,
			"--backup-restore-tls-enabled=true",
			"--backup-restore-ca-cert-bundle-path="+etcdpod.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
	} else {
		args = append(args, "--backup-restore-tls-enabled=false")
	}
	return args
}
