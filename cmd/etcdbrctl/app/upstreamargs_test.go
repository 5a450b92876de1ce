package app

import (
	"slices"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
)

// TestCompactAcceptsUpstreamDruidsJobArgs parses the arguments and environment upstream
// etcd-druid (internal/controller/compaction) renders for its compaction Job with an S3 store: the
// store, leases, quota and timeouts reach their settings, the temporary directories and the metrics wait
// are reported as ignored.
func TestCompactAcceptsUpstreamDruidsJobArgs(t *testing.T) {
	t.Setenv("STORAGE_CONTAINER", "bucket-1")
	t.Setenv("POD_NAMESPACE", "shoot--a--b")
	t.Setenv("AWS_APPLICATION_CREDENTIALS", "/var/etcd-backup")
	t.Setenv("KUBECONFIG", writeKubeconfig(t))
	args := []string{"compact",
		"--data-dir=/var/etcd/data/compaction.etcd",
		"--restoration-temp-snapshots-dir=/var/etcd/data/compaction.restoration.temp",
		"--snapstore-temp-directory=/var/etcd/data/tmp",
		"--metrics-scrape-wait-duration=1m0s",
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-main-full-snap",
		"--delta-snapshot-lease-name=etcd-main-delta-snap",
		"--embedded-etcd-quota-bytes=8589934592",
		"--etcd-defrag-timeout=9m0s",
		"--etcd-snapshot-timeout=7m0s",
		"--storage-provider=S3",
		"--store-prefix=shoot--a--b--uid/etcd-main",
		"--store-container=bucket-1",
	}
	cmd, o := newCompactCommand()
	parse(t, cmd, args)
	cfg, err := o.storeFlags.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != "S3" || cfg.Container != "bucket-1" || cfg.Prefix != "shoot--a--b--uid/etcd-main" || cfg.SecretDir != "/var/etcd-backup" {
		t.Errorf("store config %+v", cfg)
	}
	opts, err := o.compactorOptions()
	if err != nil {
		t.Fatal(err)
	}
	if opts.DataDir != "/var/etcd/data/compaction.etcd" || opts.QuotaBytes != 8<<30 || opts.SnapshotTimeout != 7*time.Minute || opts.DefragTimeout != 9*time.Minute {
		t.Errorf("compactor options %+v", opts)
	}
	checkIgnored(t, o.ignored.Given(), []string{
		"restoration-temp-snapshots-dir=/var/etcd/data/compaction.restoration.temp",
		"snapstore-temp-directory=/var/etcd/data/tmp",
		"metrics-scrape-wait-duration=1m0s",
	})
}

// TestCopyAcceptsUpstreamDruidsJobArgs parses the arguments and environment upstream etcd-druid
// (internal/controller/etcdcopybackupstask) renders for its copy Job, S3 target and GCS source (each
// container both as flag and in $[SOURCE_]STORAGE_CONTAINER): the temporary directory is reported as
// ignored.
func TestCopyAcceptsUpstreamDruidsJobArgs(t *testing.T) {
	t.Setenv("STORAGE_CONTAINER", "target-bucket")
	t.Setenv("AWS_APPLICATION_CREDENTIALS", "/var/etcd-backup")
	t.Setenv("SOURCE_STORAGE_CONTAINER", "source-bucket")
	t.Setenv("SOURCE_GOOGLE_APPLICATION_CREDENTIALS", "/var/.source-gcp/serviceaccount.json")
	args := []string{"copy",
		"--snapstore-temp-directory=/home/nonroot/data/tmp",
		"--storage-provider=S3",
		"--store-prefix=new/etcd-main",
		"--store-container=target-bucket",
		"--source-storage-provider=GCS",
		"--source-store-prefix=old/etcd-main",
		"--source-store-container=source-bucket",
		"--max-backup-age=3",
		"--max-backups-to-copy=2",
		"--wait-for-final-snapshot=true",
		"--wait-for-final-snapshot-timeout=5m0s",
	}
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
	if target.Provider != "S3" || target.Container != "target-bucket" || target.Prefix != "new/etcd-main" || target.SecretDir != "/var/etcd-backup" {
		t.Errorf("target %+v", target)
	}
	if source.Provider != "GCS" || source.Container != "source-bucket" || source.Prefix != "old/etcd-main" || source.SecretDir != "/var/.source-gcp" {
		t.Errorf("source %+v", source)
	}
	if opts := o.copierOptions(); opts.MaxBackups != 2 || opts.MaxBackupAge != 3 || !opts.WaitForFinalSnapshot || opts.WaitForFinalSnapshotTimeout != 5*time.Minute {
		t.Errorf("copier options %+v", opts)
	}
	checkIgnored(t, o.ignored.Given(), []string{"snapstore-temp-directory=/home/nonroot/data/tmp"})
}

// checkIgnored compares the reported ignored flags ("name=value") and checks each names its reason.
func checkIgnored(t *testing.T, got []ignoredflags.Flag, want []string) {
	t.Helper()
	var names []string
	for _, f := range got {
		names = append(names, f.Name+"="+f.Value)
		if f.Why == "" {
			t.Errorf("ignored flag --%s gives no reason", f.Name)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("ignored flags %v, want %v", names, want)
	}
}
