package statefulset

import (
	"fmt"
	"strconv"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
)

// LocalHostName is the name under which each container of a pod reaches the other one (hostAlias to
// 127.0.0.1); the etcd server certificate must carry it.
func LocalHostName(etcd *druidv1alpha1.Etcd) string { return etcd.Name + "-local" }

// BackupRestoreArgs are the arguments of `etcdbrctl server` derived from the spec, with the flags of
// shared/reference/backup-restore.md. Optional settings are only passed when set, so that the sidecar's own
// defaults apply otherwise. The order is fixed, which keeps the pod template stable.
func BackupRestoreArgs(etcd *druidv1alpha1.Etcd) []string {
	spec := etcd.Spec
	clientScheme := configmap.Scheme(spec.Etcd.ClientUrlTLS != nil)
	args := []string{
		"server",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=" + spec.Etcd.HeartbeatDuration.Duration.String(),
		"--data-dir=" + configmap.DataDir,
		fmt.Sprintf("--endpoints=%s://%s:%d", clientScheme, LocalHostName(etcd), *spec.Etcd.ClientPort),
		fmt.Sprintf("--service-endpoints=%s://%s.%s.svc:%d", clientScheme, etcd.ClientServiceName(), etcd.Namespace, *spec.Etcd.ClientPort),
		fmt.Sprintf("--server-port=%d", *spec.Backup.Port),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil {
		args = append(args,
			"--insecure-transport=false",
			"--cacert="+configmap.ClientCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
		if tls.ClientTLSSecretRef.Name != "" {
			args = append(args,
				"--cert="+configmap.ClientTLSMountPath+"/"+configmap.TLSCertKey,
				"--key="+configmap.ClientTLSMountPath+"/"+configmap.TLSKeyKey)
		}
	} else {
		args = append(args, "--insecure-transport=true")
	}
	if tls := spec.Backup.TLS; tls != nil {
		// The CA also verifies the backup leader's sidecar when this one forwards a snapshot request to it.
		args = append(args,
			"--server-cert="+configmap.BackupServerTLSMountPath+"/"+configmap.TLSCertKey,
			"--server-key="+configmap.BackupServerTLSMountPath+"/"+configmap.TLSKeyKey,
			"--server-cacert="+configmap.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
	}
	if s := spec.Etcd.DefragmentationSchedule; s != nil && *s != "" {
		args = append(args, "--defragmentation-schedule="+*s)
	}
	return append(args, storeArgs(etcd)...)
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
	if c := backup.SnapshotCompression; c != nil && c.Enabled != nil && *c.Enabled {
		args = append(args, "--compress-snapshots=true")
		if c.Policy != nil {
			args = append(args, "--compression-policy="+string(*c.Policy))
		}
	}
	return args
}

// EtcdWrapperArgs are the arguments of the etcd wrapper (container `etcd`): where to reach the sidecar
// (through the hostAlias, with its CA when the sidecar serves TLS), the name etcd's certificate is valid
// for, the client certificate for its own health checks, and the port of /readyz and /stop.
func EtcdWrapperArgs(etcd *druidv1alpha1.Etcd) []string {
	spec := etcd.Spec
	args := []string{
		"start-etcd",
		fmt.Sprintf("--backup-restore-host-port=%s:%d", LocalHostName(etcd), *spec.Backup.Port),
		"--etcd-server-name=" + LocalHostName(etcd),
		fmt.Sprintf("--etcd-wrapper-port=%d", *spec.Etcd.WrapperPort),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil && tls.ClientTLSSecretRef.Name != "" {
		args = append(args,
			"--etcd-client-cert-path="+configmap.ClientTLSMountPath+"/"+configmap.TLSCertKey,
			"--etcd-client-key-path="+configmap.ClientTLSMountPath+"/"+configmap.TLSKeyKey)
	}
	if tls := spec.Backup.TLS; tls != nil {
		args = append(args,
			"--backup-restore-tls-enabled=true",
			"--backup-restore-ca-cert-bundle-path="+configmap.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef))
	} else {
		args = append(args, "--backup-restore-tls-enabled=false")
	}
	return args
}
