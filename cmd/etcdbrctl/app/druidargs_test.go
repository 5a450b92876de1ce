package app

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/compaction"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/copybackupstask"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// setEnv applies the environment druid renders for a Job's container.
func setEnv(t *testing.T, env []corev1.EnvVar) {
	t.Helper()
	setEnvFromSecret(t, env, nil)
}

// setEnvFromSecret applies the environment like the kubelet, taking secretKeyRef values from secret (a
// missing optional key leaves its variable unset; a missing required one fails the test, as the kubelet
// would not start the container).
func setEnvFromSecret(t *testing.T, env []corev1.EnvVar, secret map[string]string) {
	t.Helper()
	for _, e := range env {
		if e.ValueFrom == nil {
			t.Setenv(e.Name, e.Value)
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil {
			t.Fatalf("variable %s has an unexpected source %+v", e.Name, e.ValueFrom)
		}
		v, ok := secret[ref.Key]
		switch {
		case ok:
			t.Setenv(e.Name, v)
		case !ptr.Deref(ref.Optional, false):
			t.Fatalf("variable %s needs key %q of secret %s, which is missing", e.Name, ref.Key, ref.Name)
		}
	}
}

// TestCompactAcceptsDruidJobArgs parses the arguments and credentials variable of druid's compaction Job
// for an S3 store with compression, timeouts and lease renewal.
func TestCompactAcceptsDruidJobArgs(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a--b"}}
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{
		Provider: ptr.To(druidv1alpha1.StorageProviderAWS), Container: ptr.To("bucket-1"), Prefix: "shoot--a--b--uid/etcd-main",
		EndpointOverride: ptr.To("http://s3.local:9000"), SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
	}
	etcd.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.ZlibCompression)}
	etcd.Spec.Backup.EtcdSnapshotTimeout = &metav1.Duration{Duration: 7 * time.Minute}
	etcd.Spec.Etcd.EtcdDefragTimeout = &metav1.Duration{Duration: 9 * time.Minute}
	args := compaction.CompactArgs(etcd, imagecaps.AllOurs.BackupRestore)
	setEnv(t, storeaccess.StoreCredentialsEnv(etcd.Spec.Backup.Store, etcdpod.BackupSecretMountPath, ""))
	t.Setenv("POD_NAMESPACE", etcd.Namespace)
	t.Setenv("KUBECONFIG", writeKubeconfig(t))

	cmd, o := newCompactCommand()
	parse(t, cmd, args)
	cfg, err := o.storeFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != druidv1alpha1.StorageProviderS3 || cfg.Container != "bucket-1" || cfg.Prefix != "shoot--a--b--uid/etcd-main" ||
		cfg.EndpointOverride != "http://s3.local:9000" || cfg.SecretDir != etcdpod.BackupSecretMountPath {
		t.Errorf("store config %+v", cfg)
	}
	opts, err := o.compactorOptions()
	if err != nil {
		t.Fatal(err)
	}
	if opts.DataDir != compaction.DataMountPath+"/compaction.etcd" ||
		opts.SnapshotTimeout != 7*time.Minute || opts.DefragTimeout != 9*time.Minute {
		t.Errorf("compactor options %+v", opts)
	}
	leases, ok := opts.Leases.(*snapshotlease.Kubernetes)
	if !ok || leases.Namespace != etcd.Namespace || leases.FullName != "etcd-main-full-snap" || leases.DeltaName != "etcd-main-delta-snap" {
		t.Errorf("leases %#v, want the Etcd's snapshot leases in its namespace", opts.Leases)
	}
}

// TestCopyAcceptsDruidJobArgs parses the arguments and credentials variables of druid's copy-backups Job
// with an S3 target and a GCS source (whose variable names the serviceaccount.json file).
func TestCopyAcceptsDruidJobArgs(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "shoot--a--b"}}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("target-bucket"),
		Prefix: "new/etcd-main", SecretRef: &corev1.SecretReference{Name: "target-backup"}}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderGCP), Container: ptr.To("source-bucket"),
		Prefix: "old/etcd-main", EndpointOverride: ptr.To("http://gcs.local:4443"), SecretRef: &corev1.SecretReference{Name: "source-backup"}}
	task.Spec.MaxBackupAge = ptr.To(uint32(3))
	task.Spec.MaxBackups = ptr.To(uint32(2))
	task.Spec.WaitForFinalSnapshot = &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: 5 * time.Minute}}
	args := copybackupstask.CopyArgs(task)
	setEnv(t, storeaccess.StoreCredentialsEnv(&task.Spec.TargetStore, copybackupstask.TargetSecretMountPath, ""))
	setEnv(t, storeaccess.StoreCredentialsEnv(&task.Spec.SourceStore, copybackupstask.SourceSecretMountPath, copybackupstask.SourceEnvPrefix))

	cmd, o := newCopyCommand()
	parse(t, cmd, args)
	target, err := o.targetFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	source, err := o.sourceFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	if target.Provider != druidv1alpha1.StorageProviderS3 || target.Container != "target-bucket" || target.Prefix != "new/etcd-main" ||
		target.SecretDir != copybackupstask.TargetSecretMountPath {
		t.Errorf("target %+v", target)
	}
	if source.Provider != druidv1alpha1.StorageProviderGCS || source.Container != "source-bucket" || source.Prefix != "old/etcd-main" ||
		source.EndpointOverride != "http://gcs.local:4443" || source.SecretDir != copybackupstask.SourceSecretMountPath {
		t.Errorf("source %+v", source)
	}
	opts := o.copierOptions()
	if opts.MaxBackups != 2 || opts.MaxBackupAge != 3 || !opts.WaitForFinalSnapshot || opts.WaitForFinalSnapshotTimeout != 5*time.Minute {
		t.Errorf("copier options %+v", opts)
	}
}

// TestCopyAcceptsDruidJobArgsForS3CompatibleProviders: an OSS target (alias alicloud) finds its mounted
// secret through ALICLOUD_APPLICATION_CREDENTIALS; an ECS source (alias dell) gets its secret's keys as
// SOURCE_ECS_* variables from the secret, as upstream druid passes them, and none from a directory.
func TestCopyAcceptsDruidJobArgsForS3CompatibleProviders(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "shoot--a--b"}}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderAlicloud), Container: ptr.To("target-bucket"),
		Prefix: "new/etcd-main", SecretRef: &corev1.SecretReference{Name: "target-backup"}}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderDell), Container: ptr.To("source-bucket"),
		Prefix: "old/etcd-main", SecretRef: &corev1.SecretReference{Name: "source-backup"}}
	setEnv(t, storeaccess.StoreCredentialsEnv(&task.Spec.TargetStore, copybackupstask.TargetSecretMountPath, ""))
	setEnvFromSecret(t, storeaccess.StoreCredentialsEnv(&task.Spec.SourceStore, copybackupstask.SourceSecretMountPath, copybackupstask.SourceEnvPrefix),
		map[string]string{"endpoint": "https://ecs.example.com:9021", "accessKeyID": "AK", "secretAccessKey": "SK", "insecureSkipVerify": "true"})

	cmd, o := newCopyCommand()
	parse(t, cmd, copybackupstask.CopyArgs(task))
	target, err := o.targetFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	source, err := o.sourceFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	if target.Provider != druidv1alpha1.StorageProviderOSS || target.SecretDir != copybackupstask.TargetSecretMountPath || target.SecretValues != nil {
		t.Errorf("target %+v", target)
	}
	want := map[string]string{"endpoint": "https://ecs.example.com:9021", "accessKeyID": "AK", "secretAccessKey": "SK", "insecureSkipVerify": "true"}
	if source.Provider != druidv1alpha1.StorageProviderECS || source.SecretDir != "" || !maps.Equal(source.SecretValues, want) {
		t.Errorf("source %+v, want the ECS keys as values %v", source, want)
	}
}

// TestCopyDefaultsWithoutLimits: a task without limits and without waiting copies everything at once.
func TestCopyDefaultsWithoutLimits(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "copy"}}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Prefix: "new"}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Prefix: "old"}
	cmd, o := newCopyCommand()
	parse(t, cmd, copybackupstask.CopyArgs(task))
	if opts := o.copierOptions(); opts.MaxBackups != -1 || opts.MaxBackupAge != -1 || opts.WaitForFinalSnapshot {
		t.Errorf("copier options %+v, want no limits and no waiting", opts)
	}
}

// parse checks that args start with the command's name and parses the rest as its flags.
func parse(t *testing.T, cmd interface {
	Name() string
	ParseFlags([]string) error
}, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != cmd.Name() {
		t.Fatalf("druid's arguments %v do not start with %q", args, cmd.Name())
	}
	if err := cmd.ParseFlags(args[1:]); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
}

// writeKubeconfig points the Kubernetes client at a server that is never contacted: parsing builds the
// lease client but does not use it.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSurvivingDataAcceptDruidJobArgs parses the arguments and credentials variable of the quorum-loss
// recovery's data-revision and preserve-data Jobs, for an S3 store with compression and a timeout: the
// data dir is the etcd pods', the result goes to the termination message, the store and compression are
// the sidecar's.
func TestSurvivingDataAcceptDruidJobArgs(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a--b"}}
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{
		Provider: ptr.To(druidv1alpha1.StorageProviderAWS), Container: ptr.To("bucket-1"), Prefix: "shoot--a--b--uid/etcd-main",
		SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
	}
	etcd.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.ZlibCompression)}
	etcd.Spec.Backup.EtcdSnapshotTimeout = &metav1.Duration{Duration: 7 * time.Minute}

	rev, f := newDataRevisionCommand()
	parse(t, rev, heal.DataRevisionArgs(etcd))
	if f.dataDir != etcdpod.DataDir || f.scratchDir == "" || f.terminationMessagePath != corev1.TerminationMessagePathDefault || f.owner != "shoot--a--b/etcd-main" {
		t.Errorf("data-revision flags %+v", f)
	}

	setEnv(t, storeaccess.StoreCredentialsEnv(etcd.Spec.Backup.Store, etcdpod.BackupSecretMountPath, ""))
	preserve, o := newPreserveDataCommand()
	parse(t, preserve, heal.PreserveDataArgs(etcd, 150))
	if o.expectRevision != 150 || o.timeout != 7*time.Minute || o.data.dataDir != etcdpod.DataDir ||
		o.data.terminationMessagePath != corev1.TerminationMessagePathDefault {
		t.Errorf("preserve-data options %+v, data %+v", o, o.data)
	}
	cfg, err := o.storeFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != druidv1alpha1.StorageProviderS3 || cfg.Container != "bucket-1" || cfg.Prefix != "shoot--a--b--uid/etcd-main" ||
		cfg.SecretDir != etcdpod.BackupSecretMountPath {
		t.Errorf("store config %+v", cfg)
	}
	compression, err := o.compression.Compression()
	if err != nil || compression != snapshot.CompressionZlib {
		t.Errorf("compression %+v (%v)", compression, err)
	}
}
