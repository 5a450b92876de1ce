package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// header starts every test file: the upstream binary's apiVersion.
const header = "apiVersion: operator.config.druid.gardener.cloud/v1alpha1\nkind: OperatorConfiguration\n"

const testFile = header + `
clientConnection: {qps: 50, burst: 60}
leaderElection: {enabled: false}
controllers:
  etcd: {concurrentSyncs: 20, etcdStatusSyncPeriod: 30s, etcdMember: {notReadyThreshold: 2m}}
  compaction: {enabled: true, eventsThreshold: 5000, triggerFullSnapshotThreshold: 15000}
server: {webhooks: {port: 10250}}
webhooks:
  etcdComponentProtection: {enabled: true, reconcilerServiceAccountFQDN: "system:serviceaccount:garden:etcd-druid", exemptServiceAccounts: [a]}
`

// images are flags only; every test that validates passes them.
var images = []string{"--etcd-wrapper-image=wrapper:v1", "--backup-restore-image=brctl:v1"}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	NewWithT(t).Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

func resolve(t *testing.T, file string, args ...string) (Config, error) {
	t.Helper()
	if file != "" {
		args = append(args, "--config", writeFile(t, file))
	}
	return resolveArgs(t, args...)
}

func resolveArgs(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	cmd := NewCommand()
	NewWithT(t).Expect(cmd.ParseFlags(args)).To(Succeed())
	path, _ := cmd.Flags().GetString("config")
	return ResolveConfig(cmd.Flags(), path, "")
}

// defaultsWithImages is what a run without file and with only the image flags resolves to.
func defaultsWithImages() Config {
	c := DefaultConfig()
	c.Etcd.Images.EtcdWrapper, c.Etcd.Images.BackupRestore = "wrapper:v1", "brctl:v1"
	c.complete()
	return c
}

// A file like the one the upstream chart renders maps every field onto Config: the whole struct is compared,
// so a field that is dropped, mapped to the wrong setting or defaulted anew fails the test.
func TestFullOperatorConfiguration(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolveArgs(t, append(images, "--config=testdata/operatorconfiguration.yaml")...)
	g.Expect(err).NotTo(HaveOccurred())

	want := defaultsWithImages()
	want.ClientConnection = ClientConnection{QPS: 150, Burst: 250}
	want.LeaderElection = true
	want.LeaderElectionLeaseDuration = 30 * time.Second
	want.LeaderElectionRenewDeadline = 20 * time.Second
	want.LeaderElectionRetryPeriod = 5 * time.Second
	want.LeaderElectionResourceLock = "leases"
	want.LeaderElectionID = "etcd-druid-leader-election"
	want.Webhooks = WebhookConfig{Enabled: true, ComponentProtection: true, Host: "0.0.0.0", Port: 10250, CertDir: "/etc/webhook-server-tls",
		ReconcilerServiceAccount: "system:serviceaccount:garden:etcd-druid",
		ExemptServiceAccounts:    []string{"system:serviceaccount:kube-system:generic-garbage-collector"},
		PodControllerUsers:       protection.DefaultPodControllerUsers,
		GarbageCollectorUsers:    protection.DefaultGarbageCollectorUsers}
	want.MetricsBindAddress = "127.0.0.1:8090"
	want.Etcd.Workers = 25
	want.Etcd.EnableEtcdSpecAutoReconcile = true
	want.Etcd.StatusSyncPeriod = 20 * time.Second
	want.Etcd.EtcdMemberNotReadyThreshold = 7 * time.Minute
	want.Etcd.EtcdMemberUnknownThreshold = 90 * time.Second
	want.Compaction.EnableBackupCompaction = true
	want.Compaction.Workers = 4
	want.Compaction.EventsThreshold = 500_000
	want.Compaction.TriggerFullSnapshotThreshold = 2_000_000
	want.Compaction.ActiveDeadline = 2 * time.Hour
	want.EnableCopyBackupsTask = true
	want.CopyBackupsTask.Workers = 6
	want.Secret.Workers = 12
	want.Log = LogConfig{Level: "debug", Format: "text", source: "logConfiguration"}
	want.IgnoredSettings = []IgnoredSetting{
		{Path: "clientConnection.contentType", Value: "application/vnd.kubernetes.protobuf", Reason: reasonContentType},
		{Path: "clientConnection.acceptContentTypes", Value: "application/vnd.kubernetes.protobuf,application/json", Reason: reasonContentType},
		{Path: "controllers.disableLeaseCache", Value: "false", Reason: reasonLeaseCache},
		{Path: "controllers.etcd.disableEtcdServiceAccountAutomount", Value: "false", Reason: reasonAutomount},
		{Path: "controllers.compaction.metricsScrapeWaitDuration", Value: "1m0s", Reason: reasonScrapeWait},
		{Path: "featureGates", Value: "UseEtcdWrapper=true", Reason: reasonFeatureGates},
	}
	g.Expect(cfg).To(Equal(want))
	g.Expect(cfg.Validate()).To(Succeed())
}

// The upstream binary's own spelling (apiVersion operator.config…, `logging`) loads too.
func TestOperatorConfigurationTypeSpelling(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, header+`
logging: {logLevel: error, logFormat: json}
`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Log).To(Equal(LogConfig{Level: "error", Format: "json", source: "logging"}))
	g.Expect(cfg.IgnoredSettings).To(BeEmpty())
}

// Fields the file leaves out keep our defaults, and so do zero values that upstream druid defaults too;
// concurrentSyncs is taken as given.
func TestPartialFileKeepsDefaults(t *testing.T) {
	for name, tc := range map[string]struct {
		file   string
		mutate func(*Config)
	}{
		"only apiVersion and kind": {file: header, mutate: func(*Config) {}},
		"one controller field": {file: header + "controllers: {etcd: {concurrentSyncs: 9}}\n",
			mutate: func(c *Config) { c.Etcd.Workers = 9 }},
		"leader election without enabled stays on": {file: header + "leaderElection: {resourceName: other}\n",
			mutate: func(c *Config) { c.LeaderElectionID = "other" }},
		"zero values are unset": {file: header + `
clientConnection: {qps: 0, burst: 0}
leaderElection: {leaseDuration: 0s, resourceName: ""}
server: {webhooks: {port: 0, serverCertDir: ""}, metrics: {port: 0}}
controllers: {etcd: {etcdStatusSyncPeriod: 0s}, compaction: {eventsThreshold: 0, activeDeadlineDuration: 0s}}
`, mutate: func(*Config) {}},
		"metrics port only": {file: header + "server: {metrics: {port: 9090}}\n",
			mutate: func(c *Config) { c.MetricsBindAddress = ":9090" }},
		"metrics bind address only": {file: header + "server: {metrics: {bindAddress: 10.0.0.1}}\n",
			mutate: func(c *Config) { c.MetricsBindAddress = "10.0.0.1:8080" }},
		"copy backups task switched off": {file: header + "controllers: {etcdCopyBackupsTask: {enabled: false}}\n",
			mutate: func(c *Config) { c.EnableCopyBackupsTask = false }},
		"reconciler from serviceAccountInfo and the same FQDN": {file: header + `
webhooks: {etcdComponentProtection: {reconcilerServiceAccountFQDN: "system:serviceaccount:ns:sa", serviceAccountInfo: {name: sa, namespace: ns}}}
`, mutate: func(c *Config) { c.Webhooks.ReconcilerServiceAccount = "system:serviceaccount:ns:sa" }},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			cfg, err := resolve(t, tc.file, images...)
			g.Expect(err).NotTo(HaveOccurred())
			want := defaultsWithImages()
			tc.mutate(&want)
			g.Expect(cfg).To(Equal(want))
			g.Expect(cfg.Validate()).To(Succeed())
		})
	}
}

// The file overrides the defaults, flags set on the command line override the file, and unset flags
// keep the file's values.
func TestConfigPrecedence(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, testFile, append(images, "--etcd-workers=7", "--exempt-service-accounts=x,y",
		"--enable-etcd-spec-auto-reconcile", "--kube-api-burst=70", "--leader-election", "--webhook-port=9444")...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.ClientConnection).To(Equal(ClientConnection{QPS: 50, Burst: 70}), "file's qps, flag's burst")
	g.Expect(cfg.Etcd.Workers).To(Equal(7), "flag beats file")
	g.Expect(cfg.Webhooks.ExemptServiceAccounts).To(Equal([]string{"x", "y"}), "slice flag replaces the file's list")
	g.Expect(cfg.Etcd.EnableEtcdSpecAutoReconcile).To(BeTrue())
	g.Expect(cfg.LeaderElection).To(BeTrue(), "flag beats the file's enabled: false")
	g.Expect(cfg.Webhooks.Port).To(Equal(9444), "flag beats the file's server.webhooks.port")
	g.Expect(cfg.Etcd.StatusSyncPeriod).To(Equal(30*time.Second), "file beats default")
	g.Expect(cfg.Etcd.EtcdMemberNotReadyThreshold).To(Equal(2 * time.Minute))
	g.Expect(cfg.Etcd.EtcdMemberUnknownThreshold).To(Equal(time.Minute), "default kept")
	g.Expect(cfg.Compaction.EnableBackupCompaction).To(BeTrue())
	g.Expect(cfg.Compaction.EventsThreshold).To(Equal(int64(5000)))
	g.Expect(cfg.Compaction.TriggerFullSnapshotThreshold).To(Equal(int64(15000)))
	g.Expect(cfg.Webhooks.Enabled).To(BeTrue())
	g.Expect(cfg.Webhooks.ReconcilerServiceAccount).To(Equal("system:serviceaccount:garden:etcd-druid"))
	g.Expect(cfg.Compaction.BackupRestoreImage).To(Equal("brctl:v1"), "Jobs default to the backup-restore image")
	g.Expect(cfg.Validate()).To(Succeed())
}

func TestDefaultsWithoutFile(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", images...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg).To(Equal(defaultsWithImages()))
	g.Expect(cfg.LeaderElection).To(BeTrue())
	g.Expect(cfg.LeaderElectionID).To(Equal(LeaderElectionID))
	g.Expect(cfg.Etcd.Workers).To(Equal(3))
	g.Expect(cfg.Etcd.StatusSyncPeriod).To(Equal(15 * time.Second))
	g.Expect(cfg.MetricsBindAddress).To(Equal(":8080"))
	g.Expect(cfg.Webhooks.Enabled).To(BeFalse())
	g.Expect(cfg.Webhooks.CertDir).To(Equal("/etc/webhook-server-tls"))
	g.Expect(cfg.EnableCopyBackupsTask).To(BeTrue())
	g.Expect(cfg.IgnoredSettings).To(BeEmpty())
	g.Expect(cfg.Validate()).To(Succeed())
}

// A file that is not an OperatorConfiguration, or has a field the schema does not know, is refused with an
// error naming what is wrong.
func TestFileErrors(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"unknown field":         {header + "controllers: {etcd: {wokers: 3}}\n", `unknown field "wokers"`},
		"unknown top field":     {header + "images: {etcdWrapper: w}\n", `unknown field "images"`},
		"certDir under metrics": {header + "server: {metrics: {serverCertDir: /x}}\n", `unknown field "serverCertDir"`},
		"duplicate field":       {header + "clientConnection: {qps: 1}\nclientConnection: {qps: 2}\n", `"clientConnection"`},
		"unknown kind": {"apiVersion: operator.config.druid.gardener.cloud/v1alpha1\nkind: DruidConfiguration\n",
			`kind "DruidConfiguration" is not supported`},
		"unknown apiVersion": {"apiVersion: druid.gardener.cloud/v1alpha1\nkind: OperatorConfiguration\n",
			`apiVersion "druid.gardener.cloud/v1alpha1" of kind OperatorConfiguration is not supported`},
		"our former schema": {"clientConnection: {qps: 5}\ncontrollers: {etcd: {workers: 3}}\n", `kind "" is not supported`},
		"two logging sections": {header + "logging: {logLevel: info}\nlogConfiguration: {logLevel: info}\n",
			"logging and logConfiguration"},
		"service account info without namespace": {header + "webhooks: {etcdComponentProtection: {serviceAccountInfo: {name: sa}}}\n",
			"serviceAccountInfo needs both name and namespace"},
		"two reconciler accounts": {header + `
webhooks: {etcdComponentProtection: {reconcilerServiceAccountFQDN: "system:serviceaccount:a:b", serviceAccountInfo: {name: sa, namespace: ns}}}
`, "name different accounts"},
		"not a duration": {header + "controllers: {etcd: {etcdStatusSyncPeriod: often}}\n", "often"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := resolve(t, tc.file, images...)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// Values the file may hold but our druid cannot run with fail validation, naming the file's field.
func TestFileValuesAreValidated(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"log level":           {header + "logConfiguration: {logLevel: verbose}\n", `logConfiguration.logLevel must be one of debug, info, error; got "verbose"`},
		"log format":          {header + "logging: {logFormat: xml}\n", `logging.logFormat must be one of json, text; got "xml"`},
		"resource lock":       {header + "leaderElection: {resourceLock: configmaps}\n", `leaderElection.resourceLock must be "leases", got "configmaps"`},
		"renew beyond lease":  {header + "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n", "renewDeadline (10s) < leaseDuration (10s)"},
		"zero etcd syncs":     {header + "controllers: {etcd: {concurrentSyncs: 0}}\n", "etcd controller: workers must be at least 1, got 0"},
		"negative copy syncs": {header + "controllers: {etcdCopyBackupsTask: {concurrentSyncs: -1}}\n", "copy-backups-task controller: workers must be at least 1"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			cfg, err := resolve(t, tc.file, images...)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Validate()).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// The copy-backups-task controller switched off needs no valid settings.
func TestDisabledCopyBackupsTaskIsNotValidated(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, header+"controllers: {etcdCopyBackupsTask: {enabled: false, concurrentSyncs: -1}}\n", images...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed())
}

// The ignored settings are named in one log line, each with value and reason; none, no line.
func TestIgnoredSettingsAreLoggedOnce(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	logIgnoredSettings(logger, nil)
	g.Expect(lines).To(BeEmpty())

	cfg, err := resolveArgs(t, append(images, "--config=testdata/operatorconfiguration.yaml")...)
	g.Expect(err).NotTo(HaveOccurred())
	logIgnoredSettings(logger, cfg.IgnoredSettings)
	g.Expect(lines).To(HaveLen(1))
	g.Expect(lines[0]).To(ContainSubstring("accepted, has no effect"))
	g.Expect(lines[0]).To(ContainSubstring("controllers.compaction.metricsScrapeWaitDuration=1m0s (" + reasonScrapeWait + ")"))
	g.Expect(lines[0]).To(ContainSubstring("featureGates=UseEtcdWrapper=true"))
}

// The file's log level and format configure the logger unless a --zap-* flag says otherwise.
func TestLogConfig(t *testing.T) {
	logs := func(t *testing.T, lc LogConfig, args ...string) string {
		t.Helper()
		g := NewWithT(t)
		opts := zap.Options{}
		fs := flag.NewFlagSet("log", flag.ContinueOnError)
		opts.BindFlags(fs)
		g.Expect(fs.Parse(args)).To(Succeed())
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		g.Expect(applyLogConfig(fs, func(name string) bool { return set[name] }, lc)).To(Succeed())
		var buf bytes.Buffer
		logger := zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(&buf))
		logger.V(1).Info("debug-line")
		logger.Info("info-line")
		return buf.String()
	}
	t.Run("defaults: info as json", func(t *testing.T) {
		out := logs(t, LogConfig{})
		g := NewWithT(t)
		g.Expect(out).NotTo(ContainSubstring("debug-line"))
		g.Expect(strings.HasPrefix(out, "{")).To(BeTrue(), out)
	})
	t.Run("file: debug as text", func(t *testing.T) {
		out := logs(t, LogConfig{Level: "debug", Format: "text"})
		g := NewWithT(t)
		g.Expect(out).To(ContainSubstring("debug-line"))
		g.Expect(strings.HasPrefix(out, "{")).To(BeFalse(), out)
	})
	t.Run("file: error hides info", func(t *testing.T) {
		NewWithT(t).Expect(logs(t, LogConfig{Level: "error"})).NotTo(ContainSubstring("info-line"))
	})
	t.Run("flags win", func(t *testing.T) {
		out := logs(t, LogConfig{Level: "debug", Format: "text"}, "--zap-log-level=info", "--zap-encoder=json")
		g := NewWithT(t)
		g.Expect(out).NotTo(ContainSubstring("debug-line"))
		g.Expect(strings.HasPrefix(out, "{")).To(BeTrue(), out)
	})
}

func TestValidateNamesEveryProblem(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", "--etcd-workers=0", "--enable-webhooks", "--kube-api-qps=0")
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Etcd.Workers = 0             // Default() would otherwise restore it in AddToManager; Validate must still see it
	cfg.Etcd.Images.EtcdWrapper = "" // the built-in image vector fills it in ResolveConfig; Validate must still refuse none
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
	g.Expect(cfg.EtcdOpsTask).To(Equal(config.EtcdOpsTaskController{Enabled: true, Workers: 3, RetryInterval: 5 * time.Second, MinInterval: time.Minute}))

	cfg, err = resolve(t, header+"controllers: {etcdOpsTask: {enabled: false, concurrentSyncs: 5, requeueInterval: 20s}}\n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.EtcdOpsTask).To(Equal(config.EtcdOpsTaskController{Enabled: false, Workers: 5, RetryInterval: 20 * time.Second, MinInterval: time.Minute}))
	g.Expect(cfg.IgnoredSettings).To(BeEmpty(), "the upstream controller's settings configure ours")

	cfg, err = resolve(t, header+"controllers: {etcdOpsTask: {enabled: false}}\n", "--enable-etcd-ops-task-controller", "--etcd-ops-task-workers=2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.EtcdOpsTask.Enabled).To(BeTrue(), "flag beats file")
	g.Expect(cfg.EtcdOpsTask.Workers).To(Equal(2))

	cfg.EtcdOpsTask.Workers = -1
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("etcd-ops-task controller: workers must be at least 1")))
}

// The image compatibility setting: auto with Gardener's repositories by default; the flags force a kind
// or name other repositories, and the compaction controller gets the same setting as the Etcd controller.
func TestImageCompatibilityFlags(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", images...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(imagecaps.Config{Mode: imagecaps.ModeAuto, UpstreamRepositories: imagecaps.DefaultUpstreamRepositories}))
	g.Expect(cfg.Compaction.ImageCompatibility).To(Equal(cfg.Etcd.Images.Compatibility))

	cfg, err = resolve(t, "", append([]string{"--image-compatibility=upstream", `--upstream-image-repositories=^mirror\.example/`}, images...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed())
	g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(imagecaps.Config{Mode: imagecaps.ModeUpstream, UpstreamRepositories: `^mirror\.example/`}))
	g.Expect(cfg.Compaction.ImageCompatibility.KindOf("brctl:v1")).To(Equal(imagecaps.Upstream))

	cfg, err = resolve(t, "", append([]string{"--image-compatibility=sometimes", "--upstream-image-repositories=(x"}, images...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(MatchError(And(ContainSubstring(`got "sometimes"`), ContainSubstring("upstream repositories"))))
}

// The former spellings stay accepted: --image-compatibility=deployed is upstream, and the deprecated
// --deployed-image-repositories sets the same setting as --upstream-image-repositories, on the command line
// and on top of a --config file.
func TestImageCompatibilityFormerSpellings(t *testing.T) {
	g := NewWithT(t)
	want := imagecaps.Config{Mode: imagecaps.ModeUpstream, UpstreamRepositories: `^mirror\.example/`}
	old := []string{"--image-compatibility=deployed", `--deployed-image-repositories=^mirror\.example/`}
	for _, file := range []string{"", header} {
		cfg, err := resolve(t, file, append(old, images...)...)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Validate()).To(Succeed())
		g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(want), "file %q", file)
		g.Expect(cfg.Compaction.ImageCompatibility).To(Equal(want), "file %q", file)
	}

	flag := NewCommand().Flags().Lookup("deployed-image-repositories")
	g.Expect(flag).NotTo(BeNil())
	g.Expect(flag.Deprecated).To(ContainSubstring("--upstream-image-repositories"))
	g.Expect(flag.Hidden).To(BeTrue(), "a deprecated flag is left out of --help")
}

// TestBackupPortAccess: druid's namespace and the namespaces admitted to the backup port come from the
// flags; without --backup-port-client-namespaces only druid's namespace is admitted, and an empty value
// admits none besides the Etcd's own.
func TestBackupPortAccess(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, "", "--druid-namespace=garden")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Etcd.BackupPortAccess.DruidNamespace).To(Equal("garden"))
	g.Expect(cfg.Etcd.BackupPortAccess.Namespaces()).To(Equal([]string{"garden"}))

	cfg, err = resolve(t, "", "--druid-namespace=garden", "--backup-port-client-namespaces=monitoring,garden")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Etcd.BackupPortAccess.Namespaces()).To(Equal([]string{"garden", "monitoring"}))

	cfg, err = resolve(t, "", "--druid-namespace=garden", "--backup-port-client-namespaces=")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Etcd.BackupPortAccess.Namespaces()).To(BeEmpty())

	cfg, err = resolve(t, "", "--backup-port-client-namespaces=Not_A_Namespace")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring(`"Not_A_Namespace" is no namespace name`)))
}
