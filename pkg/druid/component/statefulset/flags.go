package statefulset

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// BackupRestoreArgs are the arguments of `etcdbrctl server` derived from the spec, with the flags of
// pkg/podwire. Optional settings are only passed when set, so that the sidecar's own
// defaults apply otherwise. The order is fixed, which keeps the pod template stable. caps switch the flags
// that the image's etcdbrctl does not take, or needs besides ours (imagecaps.BackupRestore); for our
// image the arguments are the same as before capabilities existed, so no member rolls.
func BackupRestoreArgs(etcd *druidv1alpha1.Etcd, caps imagecaps.BackupRestore) []string {
	spec := etcd.Spec
	clientScheme := etcdpod.Scheme(spec.Etcd.ClientUrlTLS != nil)
	args := []string{
		"server",
		podwire.Arg(podwire.FlagEnableMemberLeaseRenewal, "true"),
		podwire.Arg(podwire.FlagK8sHeartbeatDuration, spec.Etcd.HeartbeatDuration.Duration.String()),
		podwire.Arg(podwire.FlagDataDir, etcdpod.DataDir),
		podwire.Arg(podwire.FlagEndpoints, fmt.Sprintf("%s://%s:%d", clientScheme, etcdpod.LocalHostName(etcd.Name), *spec.Etcd.ClientPort)),
		podwire.Arg(podwire.FlagServiceEndpoints, serviceEndpoints(etcd, clientScheme)),
		podwire.Arg(podwire.FlagServerPort, fmt.Sprintf("%d", *spec.Backup.Port)),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil {
		args = append(args, podwire.Arg(podwire.FlagInsecureTransport, "false"))
		if caps.UpstreamDefaults {
			// The upstream sidecar's default is true: it would not verify etcd's server certificate.
			args = append(args, podwire.Arg(podwire.FlagInsecureSkipTLSVerify, "false"))
		}
		args = append(args, podwire.Arg(podwire.FlagCACert, etcdpod.ClientCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef)))
		if tls.ClientTLSSecretRef.Name != "" {
			args = append(args,
				podwire.Arg(podwire.FlagCert, etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSCertKey),
				podwire.Arg(podwire.FlagKey, etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSKeyKey))
		}
	} else {
		args = append(args, podwire.Arg(podwire.FlagInsecureTransport, "true"))
	}
	if tls := spec.Backup.TLS; tls != nil {
		// The CA also verifies the backup leader's sidecar when this one forwards a snapshot request to it.
		args = append(args,
			podwire.Arg(podwire.FlagServerCert, etcdpod.BackupServerTLSMountPath+"/"+etcdpod.TLSCertKey),
			podwire.Arg(podwire.FlagServerKey, etcdpod.BackupServerTLSMountPath+"/"+etcdpod.TLSKeyKey))
		if caps.ServerCACert {
			args = append(args, podwire.Arg(podwire.FlagServerCACert, etcdpod.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef)))
		}
	}
	if s := spec.Etcd.DefragmentationSchedule; s != nil && *s != "" {
		args = append(args, podwire.Arg(podwire.FlagDefragmentationSchedule, *s))
	}
	// Only a port other than the sidecar's default is passed: pods rendered before keep their template.
	if p := spec.Etcd.WrapperPort; caps.WrapperPortFlag && p != nil && *p != etcdpod.DefaultWrapperPort {
		args = append(args, podwire.Arg(podwire.FlagEtcdWrapperPort, strconv.Itoa(int(*p))))
	}
	args = append(args, tuningArgs(etcd, caps)...)
	args = append(args, storeArgs(etcd)...)
	args = append(args, restoreSourceArgs(etcd)...)
	if caps.UpstreamDefaults {
		args = append(args, upstreamSidecarArgs(etcd)...)
	}
	return args
}

// serviceEndpoints is the sidecar's --service-endpoints: the Etcd's client Service and, as upstream
// etcd-druid passes them, spec.etcd.bootstrapWithExistingCluster's client endpoints, through which the
// sidecar adds its member to the source cluster (as a learner, like a member of a scale-up) while no
// member of this Etcd serves yet.
func serviceEndpoints(etcd *druidv1alpha1.Etcd, clientScheme string) string {
	endpoints := []string{fmt.Sprintf("%s://%s.%s.svc:%d", clientScheme, druidv1alpha1.ClientServiceName(etcd), etcd.Namespace, *etcd.Spec.Etcd.ClientPort)}
	if b := etcd.Spec.Etcd.BootstrapWithExistingCluster; b != nil {
		endpoints = append(endpoints, b.ClientEndpoints...)
	}
	return strings.Join(endpoints, ",")
}

// Directories of the upstream sidecar on the data volume, as the upstream druid passes them: its defaults
// (a path relative to the working directory, /tmp) are not meant for a read-only root file system.
const (
	upstreamRestorationTempDir = etcdpod.DataVolumeMountPath + "/restoration.temp"
	upstreamSnapstoreTempDir   = etcdpod.DataVolumeMountPath + "/temp"
)

// upstreamSidecarArgs are the flags the upstream sidecar needs besides ours, with the values the upstream
// druid passes: run under etcd-wrapper, temporary directories on the data volume, and the restorer's
// embedded etcd with the member's quota and auto-compaction (our sidecar restores without one and ignores
// all of them).
func upstreamSidecarArgs(etcd *druidv1alpha1.Etcd) []string {
	args := []string{
		podwire.Arg(podwire.FlagUseEtcdWrapper, "true"),
		podwire.Arg(podwire.FlagRestorationTempSnapshotsDir, upstreamRestorationTempDir),
		podwire.Arg(podwire.FlagSnapstoreTempDirectory, upstreamSnapstoreTempDir),
	}
	return append(args, UpstreamEmbeddedEtcdArgs(etcd)...)
}

// UpstreamEmbeddedEtcdArgs configure the embedded etcd the upstream restorer (sidecar and compaction) applies
// deltas through, as the upstream druid does: the member's quota and auto-compaction.
func UpstreamEmbeddedEtcdArgs(etcd *druidv1alpha1.Etcd) []string {
	var args []string
	if q := etcd.Spec.Etcd.Quota; q != nil {
		args = append(args, podwire.Arg(podwire.FlagEmbeddedEtcdQuotaBytes, strconv.FormatInt(q.Value(), 10)))
	}
	shared := etcd.Spec.Common
	if shared.AutoCompactionMode != nil {
		args = append(args, podwire.Arg(podwire.FlagAutoCompactionMode, string(*shared.AutoCompactionMode)))
	}
	if shared.AutoCompactionRetention != nil {
		args = append(args, podwire.Arg(podwire.FlagAutoCompactionRetention, *shared.AutoCompactionRetention))
	}
	return args
}

// tuningArgs are the sidecar's timeouts, leader election and profiling, as the upstream druid passes them.
// Our sidecar gets each only when the spec asks for something other than its default (both timeouts 15m,
// which the API defaults to as well; the reelection period 5s, and its connection timeout the period), so an
// Etcd that leaves them at that keeps its pod template and no member rolls when druid is upgraded. The
// upstream sidecar gets both timeouts always, as the upstream druid passes them: its own default
// defragmentation timeout is 8m, not the 15m of the API.
func tuningArgs(etcd *druidv1alpha1.Etcd, caps imagecaps.BackupRestore) []string {
	var args []string
	duration := func(flag string, d *metav1.Duration, dflt time.Duration, always bool) {
		if d != nil && (always || d.Duration != dflt) {
			args = append(args, podwire.Arg(flag, d.Duration.String()))
		}
	}
	duration(podwire.FlagEtcdDefragTimeout, etcd.Spec.Etcd.EtcdDefragTimeout, druidv1alpha1.DefaultEtcdDefragTimeout, caps.UpstreamDefaults)
	duration(podwire.FlagEtcdSnapshotTimeout, etcd.Spec.Backup.EtcdSnapshotTimeout, druidv1alpha1.DefaultEtcdSnapshotTimeout, caps.UpstreamDefaults)
	if le := etcd.Spec.Backup.LeaderElection; le != nil {
		period := etcdpod.DefaultReelectionPeriod
		if le.ReelectionPeriod != nil {
			period = le.ReelectionPeriod.Duration
		}
		duration(podwire.FlagReelectionPeriod, le.ReelectionPeriod, etcdpod.DefaultReelectionPeriod, caps.UpstreamDefaults)
		duration(podwire.FlagEtcdConnectionTimeoutLeaderElection, le.EtcdConnectionTimeout, period, caps.UpstreamDefaults)
	}
	if p := etcd.Spec.Backup.EnableProfiling; p != nil && *p {
		args = append(args, podwire.Arg(podwire.FlagEnableProfiling, "true"))
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
		podwire.Arg(podwire.FlagEnableSnapshotLeaseRenewal, "true"),
		podwire.Arg(podwire.FlagFullSnapshotLeaseName, druidv1alpha1.FullSnapshotLeaseName(etcd)),
		podwire.Arg(podwire.FlagDeltaSnapshotLeaseName, druidv1alpha1.DeltaSnapshotLeaseName(etcd)),
	}
	args = append(args, storeaccess.StoreLocationArgs(store, "")...)
	if backup.FullSnapshotSchedule != nil && *backup.FullSnapshotSchedule != "" {
		args = append(args, podwire.Arg(podwire.FlagSchedule, *backup.FullSnapshotSchedule))
	}
	if backup.DeltaSnapshotPeriod != nil {
		args = append(args, podwire.Arg(podwire.FlagDeltaSnapshotPeriod, backup.DeltaSnapshotPeriod.Duration.String()))
	}
	if backup.DeltaSnapshotMemoryLimit != nil {
		args = append(args, podwire.Arg(podwire.FlagDeltaSnapshotMemoryLimit, strconv.FormatInt(backup.DeltaSnapshotMemoryLimit.Value(), 10)))
	}
	if backup.GarbageCollectionPolicy != nil {
		args = append(args, podwire.Arg(podwire.FlagGarbageCollectionPolicy, string(*backup.GarbageCollectionPolicy)))
		if *backup.GarbageCollectionPolicy == druidv1alpha1.GarbageCollectionPolicyLimitBased && backup.MaxBackupsLimitBasedGC != nil {
			args = append(args, podwire.Arg(podwire.FlagMaxBackups, fmt.Sprintf("%d", *backup.MaxBackupsLimitBasedGC)))
		}
	}
	if backup.GarbageCollectionPeriod != nil {
		args = append(args, podwire.Arg(podwire.FlagGarbageCollectionPeriod, backup.GarbageCollectionPeriod.Duration.String()))
	}
	if backup.DeltaSnapshotRetentionPeriod != nil && backup.DeltaSnapshotRetentionPeriod.Duration > 0 {
		args = append(args, podwire.Arg(podwire.FlagDeltaSnapshotRetentionPeriod, backup.DeltaSnapshotRetentionPeriod.Duration.String()))
	}
	return append(args, storeaccess.CompressionArgs(backup)...)
}

// restoreSourceArgs pass the Etcd's restore source annotations (druidv1alpha1.RestoreSourcePrefixAnnotation)
// to the sidecar, whose initializer restores a new cluster's first member from that source. Only with a
// store (validation refuses them without one). They stay rendered for the Etcd's life: the sidecar reads
// the source only while its own prefix holds no backup and its member no data, so after the first full
// snapshot they do nothing, and dropping them would roll every member. An upstream etcdbrctl image does
// not know the flags and refuses to start, which keeps a new cluster from bootstrapping empty instead of
// restoring.
func restoreSourceArgs(etcd *druidv1alpha1.Etcd) []string {
	prefix, ok := etcd.Annotations[druidv1alpha1.RestoreSourcePrefixAnnotation]
	if !ok || etcd.Spec.Backup.Store == nil {
		return nil
	}
	args := []string{podwire.Arg(podwire.FlagRestoreSourceStorePrefix, prefix)}
	if r, ok := etcd.Annotations[druidv1alpha1.RestoreSourceRevisionAnnotation]; ok {
		args = append(args, podwire.Arg(podwire.FlagRestoreSourceRevision, r))
	}
	if t, ok := etcd.Annotations[druidv1alpha1.RestoreSourceTimeAnnotation]; ok {
		args = append(args, podwire.Arg(podwire.FlagRestoreSourceTime, t))
	}
	return args
}

// EtcdWrapperArgs are the arguments of the etcd wrapper (container `etcd`): where to reach the sidecar
// (through the hostAlias, with its CA when the sidecar serves TLS), the name etcd's certificate is valid
// for, the client certificate for its own health checks, and the port of /readyz and /stop. caps add the
// client port for an upstream wrapper, whose readiness check dials that port rather than etcd's client URL,
// and for ours the old etcd servers its image carries (constant paths, so the template stays stable).
func EtcdWrapperArgs(etcd *druidv1alpha1.Etcd, pod imagecaps.Caps) []string {
	caps := pod.EtcdWrapper
	spec := etcd.Spec
	args := []string{
		"start-etcd",
		podwire.Arg(podwire.FlagBackupRestoreHostPort, fmt.Sprintf("%s:%d", etcdpod.LocalHostName(etcd.Name), *spec.Backup.Port)),
		podwire.Arg(podwire.FlagEtcdServerName, etcdpod.LocalHostName(etcd.Name)),
		podwire.Arg(podwire.FlagEtcdWrapperPort, fmt.Sprintf("%d", *spec.Etcd.WrapperPort)),
	}
	if tls := spec.Etcd.ClientUrlTLS; tls != nil && tls.ClientTLSSecretRef.Name != "" {
		args = append(args,
			podwire.Arg(podwire.FlagEtcdClientCertPath, etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSCertKey),
			podwire.Arg(podwire.FlagEtcdClientKeyPath, etcdpod.ClientTLSMountPath+"/"+etcdpod.TLSKeyKey))
	}
	if tls := spec.Backup.TLS; tls != nil {
		args = append(args,
			podwire.Arg(podwire.FlagBackupRestoreTLSEnabled, "true"),
			podwire.Arg(podwire.FlagBackupRestoreCACertBundlePath, etcdpod.BackupCAMountPath+"/"+configmap.CAFileName(tls.TLSCASecretRef)))
	} else {
		args = append(args, podwire.Arg(podwire.FlagBackupRestoreTLSEnabled, "false"))
	}
	if caps.ClientPortFlag {
		args = append(args, podwire.Arg(podwire.FlagEtcdClientPort, fmt.Sprintf("%d", *spec.Etcd.ClientPort)))
	}
	if caps.StepBinaries {
		args = append(args,
			podwire.Arg(podwire.FlagStepEtcd35Binary, etcdpod.StepEtcd35BinaryPath),
			podwire.Arg(podwire.FlagStepEtcd36Binary, etcdpod.StepEtcd36BinaryPath))
	}
	if caps.Hold && pod.BackupRestore.NewestRestorableEtcd != "" {
		args = append(args, podwire.Arg(podwire.FlagHoldEtcdVersion, pod.BackupRestore.NewestRestorableEtcd))
	}
	return args
}
