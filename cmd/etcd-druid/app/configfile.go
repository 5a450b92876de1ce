package app

import (
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// File is the schema of the --config YAML file. Every field is optional; a missing one keeps its default
// (or what a flag says). Durations are Go duration strings ("15s", "5m").
//
//	clientConnection: {qps: 500, burst: 1000}
//	leaderElection: {enabled: true, namespace: garden}
//	metricsBindAddress: ":8080"
//	healthProbeBindAddress: ":8081"
//	images: {etcdWrapper: ..., backupRestore: ...}
//	controllers:
//	  etcd: {workers: 50, enableEtcdSpecAutoReconcile: false, statusSyncPeriod: 15s,
//	         etcdMemberUnknownThreshold: 1m, etcdMemberNotReadyThreshold: 5m}
//	  secret: {workers: 10}
//	  compaction: {enabled: true, workers: 3, eventsThreshold: 1000000, triggerFullSnapshotThreshold: 3000000,
//	               activeDeadline: 3h}
//	  copyBackupsTask: {workers: 3}
//	webhooks: {enabled: true, port: 9443, certDir: /etc/webhook/certs,
//	           reconcilerServiceAccount: system:serviceaccount:garden:etcd-druid, exemptServiceAccounts: []}
type File struct {
	ClientConnection *struct {
		QPS   *float32 `json:"qps,omitempty"`
		Burst int      `json:"burst,omitempty"`
	} `json:"clientConnection,omitempty"`
	LeaderElection *struct {
		Enabled   *bool  `json:"enabled,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"leaderElection,omitempty"`
	MetricsBindAddress      string           `json:"metricsBindAddress,omitempty"`
	HealthProbeBindAddress  string           `json:"healthProbeBindAddress,omitempty"`
	GracefulShutdownTimeout *metav1.Duration `json:"gracefulShutdownTimeout,omitempty"`
	Images                  struct {
		EtcdWrapper   string `json:"etcdWrapper,omitempty"`
		BackupRestore string `json:"backupRestore,omitempty"`
	} `json:"images"`
	Controllers struct {
		Etcd struct {
			Workers                     int              `json:"workers,omitempty"`
			EnableEtcdSpecAutoReconcile *bool            `json:"enableEtcdSpecAutoReconcile,omitempty"`
			StatusSyncPeriod            *metav1.Duration `json:"statusSyncPeriod,omitempty"`
			EtcdMemberUnknownThreshold  *metav1.Duration `json:"etcdMemberUnknownThreshold,omitempty"`
			EtcdMemberNotReadyThreshold *metav1.Duration `json:"etcdMemberNotReadyThreshold,omitempty"`
		} `json:"etcd"`
		Secret struct {
			Workers int `json:"workers,omitempty"`
		} `json:"secret"`
		Compaction struct {
			Enabled                      *bool            `json:"enabled,omitempty"`
			Workers                      int              `json:"workers,omitempty"`
			EventsThreshold              int64            `json:"eventsThreshold,omitempty"`
			TriggerFullSnapshotThreshold int64            `json:"triggerFullSnapshotThreshold,omitempty"`
			ActiveDeadline               *metav1.Duration `json:"activeDeadline,omitempty"`
		} `json:"compaction"`
		CopyBackupsTask struct {
			Workers int `json:"workers,omitempty"`
		} `json:"copyBackupsTask"`
		EtcdOpsTask struct {
			Enabled *bool `json:"enabled,omitempty"`
			Workers int   `json:"workers,omitempty"`
		} `json:"etcdOpsTask"`
	} `json:"controllers"`
	Webhooks *struct {
		Enabled                  *bool    `json:"enabled,omitempty"`
		Port                     int      `json:"port,omitempty"`
		CertDir                  string   `json:"certDir,omitempty"`
		ReconcilerServiceAccount string   `json:"reconcilerServiceAccount,omitempty"`
		ExemptServiceAccounts    []string `json:"exemptServiceAccounts,omitempty"`
	} `json:"webhooks,omitempty"`
}

// loadFile reads path strictly (an unknown key is an error, so a typo never silently keeps a default) and
// applies what it sets onto c.
func loadFile(path string, c *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading config file: %w", err)
	}
	f := File{}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return fmt.Errorf("parsing config file %s: %w", path, err)
	}
	f.applyTo(c)
	return nil
}

func (f File) applyTo(c *Config) {
	if cc := f.ClientConnection; cc != nil {
		if cc.QPS != nil {
			c.ClientConnection.QPS = *cc.QPS
		}
		setInt(&c.ClientConnection.Burst, cc.Burst)
	}
	if le := f.LeaderElection; le != nil {
		setBool(&c.LeaderElection, le.Enabled)
		setString(&c.LeaderElectionNamespace, le.Namespace)
	}
	setString(&c.MetricsBindAddress, f.MetricsBindAddress)
	setString(&c.HealthProbeBindAddress, f.HealthProbeBindAddress)
	setDuration(&c.GracefulShutdownTimeout, f.GracefulShutdownTimeout)
	setString(&c.Etcd.Images.EtcdWrapper, f.Images.EtcdWrapper)
	setString(&c.Etcd.Images.BackupRestore, f.Images.BackupRestore)

	e := f.Controllers.Etcd
	setInt(&c.Etcd.Workers, e.Workers)
	setBool(&c.Etcd.EnableEtcdSpecAutoReconcile, e.EnableEtcdSpecAutoReconcile)
	setDuration(&c.Etcd.StatusSyncPeriod, e.StatusSyncPeriod)
	setDuration(&c.Etcd.EtcdMemberUnknownThreshold, e.EtcdMemberUnknownThreshold)
	setDuration(&c.Etcd.EtcdMemberNotReadyThreshold, e.EtcdMemberNotReadyThreshold)
	setInt(&c.Secret.Workers, f.Controllers.Secret.Workers)
	cp := f.Controllers.Compaction
	setBool(&c.Compaction.EnableBackupCompaction, cp.Enabled)
	setInt(&c.Compaction.Workers, cp.Workers)
	if cp.EventsThreshold != 0 {
		c.Compaction.EventsThreshold = cp.EventsThreshold
	}
	if cp.TriggerFullSnapshotThreshold != 0 {
		c.Compaction.TriggerFullSnapshotThreshold = cp.TriggerFullSnapshotThreshold
	}
	setDuration(&c.Compaction.ActiveDeadline, cp.ActiveDeadline)
	setInt(&c.CopyBackupsTask.Workers, f.Controllers.CopyBackupsTask.Workers)
	setBool(&c.EtcdOpsTask.Enabled, f.Controllers.EtcdOpsTask.Enabled)
	setInt(&c.EtcdOpsTask.Workers, f.Controllers.EtcdOpsTask.Workers)

	if w := f.Webhooks; w != nil {
		setBool(&c.Webhooks.Enabled, w.Enabled)
		setInt(&c.Webhooks.Port, w.Port)
		setString(&c.Webhooks.CertDir, w.CertDir)
		setString(&c.Webhooks.ReconcilerServiceAccount, w.ReconcilerServiceAccount)
		if w.ExemptServiceAccounts != nil {
			c.Webhooks.ExemptServiceAccounts = w.ExemptServiceAccounts
		}
	}
}

func setString(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setInt(dst *int, v int) {
	if v != 0 {
		*dst = v
	}
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

func setDuration(dst *time.Duration, v *metav1.Duration) {
	if v != nil {
		*dst = v.Duration
	}
}
