package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

const testFile = `
clientConnection: {qps: 50, burst: 60}
leaderElection: {enabled: false, namespace: garden}
images: {etcdWrapper: wrapper:v1, backupRestore: brctl:v1}
controllers:
  etcd: {workers: 20, statusSyncPeriod: 30s, etcdMemberNotReadyThreshold: 2m}
  compaction: {enabled: true, eventsThreshold: 5000, triggerFullSnapshotThreshold: 15000}
webhooks: {enabled: true, port: 10250, reconcilerServiceAccount: "system:serviceaccount:garden:etcd-druid", exemptServiceAccounts: [a]}
`

func resolve(t *testing.T, file string, args ...string) (Config, error) {
	t.Helper()
	cmd := NewCommand()
	if file != "" {
		path := filepath.Join(t.TempDir(), "config.yaml")
		NewWithT(t).Expect(os.WriteFile(path, []byte(file), 0o600)).To(Succeed())
		args = append(args, "--config", path)
	}
	NewWithT(t).Expect(cmd.ParseFlags(args)).To(Succeed())
	path, _ := cmd.Flags().GetString("config")
	return ResolveConfig(cmd.Flags(), path)
}

// The file overrides the defaults, flags set on the command line override the file, and unset flags
// keep the file's values.
func TestConfigPrecedence(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, testFile, "--etcd-workers=7", "--exempt-service-accounts=x,y", "--enable-etcd-spec-auto-reconcile", "--kube-api-burst=70")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.ClientConnection).To(Equal(ClientConnection{QPS: 50, Burst: 70}), "file's qps, flag's burst")
	g.Expect(cfg.Etcd.Workers).To(Equal(7), "flag beats file")
	g.Expect(cfg.Webhooks.ExemptServiceAccounts).To(Equal([]string{"x", "y"}), "slice flag replaces the file's list")
	g.Expect(cfg.Etcd.EnableEtcdSpecAutoReconcile).To(BeTrue())
	g.Expect(cfg.Etcd.StatusSyncPeriod).To(Equal(30*time.Second), "file beats default")
	g.Expect(cfg.Etcd.EtcdMemberNotReadyThreshold).To(Equal(2 * time.Minute))
	g.Expect(cfg.Etcd.EtcdMemberUnknownThreshold).To(Equal(time.Minute), "default kept")
	g.Expect(cfg.LeaderElection).To(BeFalse())
	g.Expect(cfg.LeaderElectionNamespace).To(Equal("garden"))
	g.Expect(cfg.Compaction.EnableBackupCompaction).To(BeTrue())
	g.Expect(cfg.Compaction.EventsThreshold).To(Equal(int64(5000)))
	g.Expect(cfg.Compaction.TriggerFullSnapshotThreshold).To(Equal(int64(15000)))
	g.Expect(cfg.Webhooks.Port).To(Equal(10250))
	g.Expect(cfg.Etcd.Images.EtcdWrapper).To(Equal("wrapper:v1"))
	cfg.complete()
	g.Expect(cfg.Compaction.BackupRestoreImage).To(Equal("brctl:v1"), "Jobs default to the backup-restore image")
	g.Expect(cfg.Validate()).To(Succeed())
}

func TestDefaultsWithoutFile(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", "--etcd-wrapper-image=w", "--backup-restore-image=b")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.LeaderElection).To(BeTrue())
	g.Expect(cfg.Etcd.Workers).To(Equal(3))
	g.Expect(cfg.Etcd.StatusSyncPeriod).To(Equal(15 * time.Second))
	g.Expect(cfg.MetricsBindAddress).To(Equal(":8080"))
	g.Expect(cfg.Webhooks.Enabled).To(BeFalse())
	cfg.complete()
	g.Expect(cfg.Validate()).To(Succeed())
}

func TestUnknownFileKeyIsRejected(t *testing.T) {
	_, err := resolve(t, "controllers: {etcd: {wokers: 3}}\n")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("wokers")))
}

func TestValidateNamesEveryProblem(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", "--etcd-workers=0", "--enable-webhooks", "--kube-api-qps=0")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Etcd.Workers = 0 // Default() would otherwise restore it in AddToManager; Validate must still see it
	err = cfg.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("workers must be at least 1")))
	g.Expect(err).To(MatchError(ContainSubstring("images.etcdWrapper must be set")))
	g.Expect(err).To(MatchError(ContainSubstring("reconcilerServiceAccount must be set")))
	g.Expect(err).To(MatchError(ContainSubstring("clientConnection.qps must be positive")), "client-go would silently use 5 QPS")
}

// TestLocalBackupAllowedHostPaths: the flag limits every controller that mounts Local stores; without it
// only the default directory is allowed, and the root directory is no allowed directory.
func TestLocalBackupAllowedHostPaths(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", "--local-backup-allowed-host-paths=/srv/a,/srv/b")
	g.Expect(err).NotTo(HaveOccurred())
	for _, lb := range []config.LocalBackup{cfg.Etcd.LocalBackup, cfg.Compaction.LocalBackup, cfg.CopyBackupsTask.LocalBackup} {
		g.Expect(lb.AllowedHostPaths).To(Equal([]string{"/srv/a", "/srv/b"}))
	}
	g.Expect(cfg.Etcd.LocalBackup.Check("/srv/b/bucket")).To(Succeed())
	g.Expect(cfg.Compaction.LocalBackup.Check(config.DefaultLocalBackupHostPath)).NotTo(Succeed())

	cfg, err = resolve(t, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CopyBackupsTask.LocalBackup.Check(config.DefaultLocalBackupHostPath)).To(Succeed())
	g.Expect(cfg.CopyBackupsTask.LocalBackup.Check("/")).NotTo(Succeed())

	cfg, err = resolve(t, "", "--local-backup-allowed-host-paths=/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring(`allowedHostPaths entry "/"`)))
}

// The EtcdOpsTask controller runs by default; the file and the flags switch it off and size it.
func TestEtcdOpsTaskConfig(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.EtcdOpsTask).To(Equal(config.EtcdOpsTaskController{Enabled: true, Workers: 3, RetryInterval: 5 * time.Second}))

	cfg, err = resolve(t, "controllers: {etcdOpsTask: {enabled: false, workers: 5}}\n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.EtcdOpsTask.Enabled).To(BeFalse())
	g.Expect(cfg.EtcdOpsTask.Workers).To(Equal(5))

	cfg, err = resolve(t, "controllers: {etcdOpsTask: {enabled: false}}\n", "--enable-etcd-ops-task-controller", "--etcd-ops-task-workers=2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.EtcdOpsTask.Enabled).To(BeTrue(), "flag beats file")
	g.Expect(cfg.EtcdOpsTask.Workers).To(Equal(2))

	cfg.EtcdOpsTask.Workers = -1
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("etcd-ops-task controller: workers must be at least 1")))
}
