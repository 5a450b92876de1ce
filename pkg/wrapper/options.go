package wrapper

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Options are the flags of `etcd-wrapper start-etcd`; druid passes them (statefulset.EtcdWrapperArgs).
type Options struct {
	// BackupRestoreHostPort is the sidecar's host:port (the pod's `<n>-local` hostAlias).
	BackupRestoreHostPort string
	// BackupRestoreTLSEnabled makes the wrapper call the sidecar over https, trusting
	// BackupRestoreCACertBundlePath.
	BackupRestoreTLSEnabled       bool
	BackupRestoreCACertBundlePath string
	// EtcdServerName is the name etcd's client certificate is valid for, used when the readiness check
	// talks to etcd over TLS via 127.0.0.1.
	EtcdServerName string
	// EtcdClientCertPath and EtcdClientKeyPath authenticate the readiness check to etcd.
	EtcdClientCertPath string
	EtcdClientKeyPath  string
	// WrapperPort serves /readyz and /stop.
	WrapperPort int
	// MarkerDir holds the clean-exit marker; it must survive container restarts (the data volume).
	MarkerDir string
	// PollInterval paces the status polls of the sidecar (a loopback request, cheap four times a second,
	// and every interval the etcd start waits for the sidecar's answer), and the checks whether the member
	// may leave an older etcd version.
	PollInterval time.Duration
	// EtcdLogger, when set, replaces etcd's own logger (tests silence it).
	EtcdLogger *zap.Logger
	// Step35Binary and Step36Binary are etcd 3.5 and 3.6 server binaries: data that an older etcd wrote
	// and this one (3.7) cannot open is run through them first, as this member (step.go). Empty: the one of
	// ImageStepBinaries.
	Step35Binary, Step36Binary string
	// ImageStepBinaries are the etcd servers our image carries, by minor version ("3.5", "3.6"), used
	// where the step flags are not given and the file exists: upstream etcd-druid passes no step flags,
	// and a seed that points its image vector at our wrapper before it switches druid must not leave a
	// member of etcd 3.4 or 3.5 data down. Without either, such data is refused and etcd is not started.
	ImageStepBinaries map[string]string
	// HoldVersion ("3.5" or empty) runs the image's etcd of that minor version as this member for as long as
	// the container runs, instead of this build's etcd, where the data and the cluster allow it (hold.go):
	// druid asks for it when the pod's sidecar restores only what etcd 3.5 and older write (upstream
	// etcd-backup-restore restores through etcd 3.4's storage package, which refuses storage version 3.6
	// and newer), so that the backups taken from this member stay restorable by it.
	HoldVersion string
	// StepOutput receives the older etcds' output; nil means the wrapper's standard error.
	StepOutput io.Writer
	// ListenHost is the address the wrapper port binds to; empty means all interfaces (the kubelet probes
	// the pod IP).
	ListenHost string

	// ignored are the upstream wrapper's flags that mean nothing here (see IgnoredFlags).
	ignored *ignoredflags.Set
}

// IgnoredFlags are the flags of the upstream wrapper given on the command line that have no meaning for
// this one; the command logs them once at startup.
func (o *Options) IgnoredFlags() []ignoredflags.Flag { return o.ignored.Given() }

// DefaultOptions are the defaults of the flags druid does not pass.
func DefaultOptions() Options {
	return Options{
		WrapperPort:  int(etcdpod.DefaultWrapperPort),
		MarkerDir:    etcdpod.DataVolumeMountPath,
		PollInterval: 250 * time.Millisecond,
		ImageStepBinaries: map[string]string{
			"3.5": etcdpod.StepEtcd35BinaryPath,
			"3.6": etcdpod.StepEtcd36BinaryPath,
		},
	}
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BackupRestoreHostPort, podwire.FlagBackupRestoreHostPort, o.BackupRestoreHostPort, "host:port of the backup-restore sidecar")
	fs.BoolVar(&o.BackupRestoreTLSEnabled, podwire.FlagBackupRestoreTLSEnabled, o.BackupRestoreTLSEnabled, "call the sidecar over https")
	fs.StringVar(&o.BackupRestoreCACertBundlePath, podwire.FlagBackupRestoreCACertBundlePath, o.BackupRestoreCACertBundlePath, "CA bundle that verifies the sidecar's certificate")
	fs.StringVar(&o.EtcdServerName, podwire.FlagEtcdServerName, o.EtcdServerName, "server name etcd's certificate is valid for")
	fs.StringVar(&o.EtcdClientCertPath, podwire.FlagEtcdClientCertPath, o.EtcdClientCertPath, "client certificate for talking to etcd")
	fs.StringVar(&o.EtcdClientKeyPath, podwire.FlagEtcdClientKeyPath, o.EtcdClientKeyPath, "client key for talking to etcd")
	fs.IntVar(&o.WrapperPort, podwire.FlagEtcdWrapperPort, o.WrapperPort, "port of /readyz and /stop")
	fs.StringVar(&o.MarkerDir, "clean-exit-marker-dir", o.MarkerDir, "directory on the data volume that keeps the clean-exit marker across container restarts")
	fs.DurationVar(&o.PollInterval, "sidecar-poll-interval", o.PollInterval, "interval of the sidecar status polls")
	fs.StringVar(&o.Step35Binary, podwire.FlagStepEtcd35Binary, o.Step35Binary,
		"etcd 3.5 server binary that data written by etcd 3.4 runs under first, as this member (with --step-etcd-3.6-binary); empty: "+etcdpod.StepEtcd35BinaryPath+" when the image carries it, else such data is refused")
	fs.StringVar(&o.Step36Binary, podwire.FlagStepEtcd36Binary, o.Step36Binary,
		"etcd 3.6 server binary that data written by etcd 3.5 (or 3.4, after 3.5) runs under first, as this member; empty: "+etcdpod.StepEtcd36BinaryPath+" when the image carries it, else such data is refused")
	fs.StringVar(&o.HoldVersion, podwire.FlagHoldEtcdVersion, o.HoldVersion,
		`run the image's etcd of this minor version ("`+heldVersion+`", the newest whose data upstream etcd-backup-restore restores) as this member instead of this build's etcd, unless the data or another member already runs a newer one; empty: this build's etcd`)
	o.ignored = ignoredflags.New(fs)
	o.ignored.Int64(podwire.FlagEtcdClientPort,
		"the readiness check dials the client URL etcd listens on, from the configuration the sidecar serves, not a port given here")
}

// Validate rejects options the wrapper cannot run with.
func (o *Options) Validate() error {
	var errs []error
	if o.BackupRestoreHostPort == "" {
		errs = append(errs, errors.New("--backup-restore-host-port is required"))
	}
	if o.BackupRestoreTLSEnabled && o.BackupRestoreCACertBundlePath == "" {
		errs = append(errs, errors.New("--backup-restore-ca-cert-bundle-path is required with --backup-restore-tls-enabled"))
	}
	if (o.EtcdClientCertPath == "") != (o.EtcdClientKeyPath == "") {
		errs = append(errs, errors.New("--etcd-client-cert-path and --etcd-client-key-path go together"))
	}
	if o.WrapperPort <= 0 || o.WrapperPort > 65535 {
		errs = append(errs, errors.New("--etcd-wrapper-port must be a TCP port"))
	}
	if o.HoldVersion != "" && o.HoldVersion != heldVersion {
		errs = append(errs, fmt.Errorf("--%s: only %q can be held, got %q", podwire.FlagHoldEtcdVersion, heldVersion, o.HoldVersion))
	}
	if o.PollInterval <= 0 {
		errs = append(errs, errors.New("--sidecar-poll-interval must be positive"))
	}
	return errors.Join(errs...)
}
