package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// OperatorConfigurationKind is the kind of the --config file: upstream etcd-druid's OperatorConfiguration
// (gardener/etcd-druid, api/config/v1alpha1), so that the file Gardener deploys for it configures ours
// unchanged. There is no second schema: settings the OperatorConfiguration does not have (images, the health
// probe address, the leader election namespace, the graceful shutdown timeout, the Local store limit) are
// flags only.
const OperatorConfigurationKind = "OperatorConfiguration"

// OperatorConfigurationAPIVersions are the apiVersions --config accepts, both in circulation: the group the
// upstream binary registers its type under, and the one its chart and API reference write.
var OperatorConfigurationAPIVersions = []string{
	"operator.config.druid.gardener.cloud/v1alpha1",
	"config.druid.gardener.cloud/v1alpha1",
}

// operatorConfiguration mirrors the upstream OperatorConfiguration field for field (JSON names, types and
// nesting). Every field is a pointer (featureGates a map), so that loading tells a field that is absent (the default stays)
// from one that is set; as in upstream druid, a zero number, duration or string counts as unset where
// the upstream defaulting replaces zero, and concurrentSyncs (a pointer there too) is taken as given.
type operatorConfiguration struct {
	APIVersion       string                   `json:"apiVersion"`
	Kind             string                   `json:"kind"`
	ClientConnection *fileClientConnection    `json:"clientConnection,omitempty"`
	LeaderElection   *fileLeaderElection      `json:"leaderElection,omitempty"`
	Server           *fileServerConfiguration `json:"server,omitempty"`
	Controllers      *fileControllers         `json:"controllers,omitempty"`
	Webhooks         *fileWebhooks            `json:"webhooks,omitempty"`
	FeatureGates     map[string]bool          `json:"featureGates,omitempty"`
	Logging          *fileLogConfiguration    `json:"logging,omitempty"`
	LogConfiguration *fileLogConfiguration    `json:"logConfiguration,omitempty"`
}

type fileClientConnection struct {
	QPS                *float32 `json:"qps,omitempty"`
	Burst              *int     `json:"burst,omitempty"`
	ContentType        *string  `json:"contentType,omitempty"`
	AcceptContentTypes *string  `json:"acceptContentTypes,omitempty"`
}

type fileLeaderElection struct {
	Enabled       *bool            `json:"enabled,omitempty"`
	LeaseDuration *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod   *metav1.Duration `json:"retryPeriod,omitempty"`
	ResourceLock  *string          `json:"resourceLock,omitempty"`
	ResourceName  *string          `json:"resourceName,omitempty"`
}

type fileServerConfiguration struct {
	Webhooks *fileTLSServer `json:"webhooks,omitempty"`
	Metrics  *fileServer    `json:"metrics,omitempty"`
}

type fileServer struct {
	BindAddress *string `json:"bindAddress,omitempty"`
	Port        *int    `json:"port,omitempty"`
}

type fileTLSServer struct {
	fileServer    `json:",inline"`
	ServerCertDir *string `json:"serverCertDir,omitempty"`
}

type fileControllers struct {
	DisableLeaseCache   *bool                `json:"disableLeaseCache,omitempty"`
	Etcd                *fileEtcdController  `json:"etcd,omitempty"`
	Compaction          *fileCompaction      `json:"compaction,omitempty"`
	EtcdCopyBackupsTask *fileCopyBackupsTask `json:"etcdCopyBackupsTask,omitempty"`
	Secret              *fileSecret          `json:"secret,omitempty"`
	EtcdOpsTask         *fileEtcdOpsTask     `json:"etcdOpsTask,omitempty"`
}

type fileEtcdController struct {
	ConcurrentSyncs                    *int             `json:"concurrentSyncs,omitempty"`
	EnableEtcdSpecAutoReconcile        *bool            `json:"enableEtcdSpecAutoReconcile,omitempty"`
	DisableEtcdServiceAccountAutomount *bool            `json:"disableEtcdServiceAccountAutomount,omitempty"`
	EtcdStatusSyncPeriod               *metav1.Duration `json:"etcdStatusSyncPeriod,omitempty"`
	EtcdMember                         *struct {
		NotReadyThreshold *metav1.Duration `json:"notReadyThreshold,omitempty"`
		UnknownThreshold  *metav1.Duration `json:"unknownThreshold,omitempty"`
	} `json:"etcdMember,omitempty"`
}

type fileCompaction struct {
	Enabled                      *bool            `json:"enabled,omitempty"`
	ConcurrentSyncs              *int             `json:"concurrentSyncs,omitempty"`
	EventsThreshold              *int64           `json:"eventsThreshold,omitempty"`
	TriggerFullSnapshotThreshold *int64           `json:"triggerFullSnapshotThreshold,omitempty"`
	ActiveDeadlineDuration       *metav1.Duration `json:"activeDeadlineDuration,omitempty"`
	MetricsScrapeWaitDuration    *metav1.Duration `json:"metricsScrapeWaitDuration,omitempty"`
}

type fileCopyBackupsTask struct {
	Enabled         *bool `json:"enabled,omitempty"`
	ConcurrentSyncs *int  `json:"concurrentSyncs,omitempty"`
}

type fileSecret struct {
	ConcurrentSyncs *int `json:"concurrentSyncs,omitempty"`
}

type fileEtcdOpsTask struct {
	Enabled         *bool            `json:"enabled,omitempty"`
	ConcurrentSyncs *int             `json:"concurrentSyncs,omitempty"`
	RequeueInterval *metav1.Duration `json:"requeueInterval,omitempty"`
}

type fileWebhooks struct {
	EtcdComponentProtection *struct {
		Enabled                      *bool   `json:"enabled,omitempty"`
		ReconcilerServiceAccountFQDN *string `json:"reconcilerServiceAccountFQDN,omitempty"`
		ServiceAccountInfo           *struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"serviceAccountInfo,omitempty"`
		ExemptServiceAccounts []string `json:"exemptServiceAccounts,omitempty"`
	} `json:"etcdComponentProtection,omitempty"`
}

type fileLogConfiguration struct {
	LogLevel  *string `json:"logLevel,omitempty"`
	LogFormat *string `json:"logFormat,omitempty"`
}

// IgnoredSetting is a field of the --config file that is accepted but has no effect in our druid.
type IgnoredSetting struct {
	// Path is the field's path in the file, e.g. controllers.compaction.metricsScrapeWaitDuration.
	Path string
	// Value is the value the file gives, as text.
	Value string
	// Reason says why it has no effect here.
	Reason string
}

func (s IgnoredSetting) String() string { return s.Path + "=" + s.Value + " (" + s.Reason + ")" }

// Reasons of the accepted fields that have no effect (docs/compatibility.md, "druid's configuration file").
const (
	reasonContentType  = "druid's clients choose the encoding per kind: protobuf for Kubernetes' own kinds, JSON for druid's custom resources, which have no other"
	reasonLeaseCache   = "the cache already holds only druid's member leases, whose events drive the status flow"
	reasonAutomount    = "the backup-restore sidecar renews and marks the member leases with the pod's service account token, so the token is always mounted"
	reasonScrapeWait   = "our compaction Job serves no metrics endpoint to wait for"
	reasonFeatureGates = "our druid has no feature gates"
)

// loadFile reads the OperatorConfiguration at path and applies what it sets onto c. apiVersion and kind must
// be one of the accepted ones; decoding is strict, so an unknown or duplicated field is an error naming it
// rather than a setting that silently keeps its default. Fields without a meaning for us are returned in
// c.IgnoredSettings.
func loadFile(path string, c *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading config file: %w", err)
	}
	// apiVersion and kind first, so that a file of another kind (or of our former schema) is named as such
	// instead of failing on its first field.
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return fmt.Errorf("parsing config file %s: %w", path, err)
	}
	if tm.Kind != OperatorConfigurationKind {
		return fmt.Errorf("config file %s: kind %q is not supported: want %s", path, tm.Kind, OperatorConfigurationKind)
	}
	if !slices.Contains(OperatorConfigurationAPIVersions, tm.APIVersion) {
		return fmt.Errorf("config file %s: apiVersion %q of kind %s is not supported: want one of %s",
			path, tm.APIVersion, OperatorConfigurationKind, strings.Join(OperatorConfigurationAPIVersions, ", "))
	}
	f := operatorConfiguration{}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return fmt.Errorf("config file %s is not a valid %s: %w", path, OperatorConfigurationKind, err)
	}
	if err := f.applyTo(c); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// applyTo maps the file onto c. Only what the file sets changes c; the rest keeps c's defaults.
func (f operatorConfiguration) applyTo(c *Config) error {
	var errs []error
	ignore := func(path string, value any, reason string) {
		c.IgnoredSettings = append(c.IgnoredSettings, IgnoredSetting{Path: path, Value: fmt.Sprint(value), Reason: reason})
	}

	if cc := f.ClientConnection; cc != nil {
		if cc.QPS != nil && *cc.QPS != 0 {
			c.ClientConnection.QPS = *cc.QPS
		}
		if cc.Burst != nil && *cc.Burst != 0 {
			c.ClientConnection.Burst = *cc.Burst
		}
		if cc.ContentType != nil {
			ignore("clientConnection.contentType", *cc.ContentType, reasonContentType)
		}
		if cc.AcceptContentTypes != nil {
			ignore("clientConnection.acceptContentTypes", *cc.AcceptContentTypes, reasonContentType)
		}
	}

	if le := f.LeaderElection; le != nil {
		setBool(&c.LeaderElection, le.Enabled)
		setDuration(&c.LeaderElectionLeaseDuration, le.LeaseDuration)
		setDuration(&c.LeaderElectionRenewDeadline, le.RenewDeadline)
		setDuration(&c.LeaderElectionRetryPeriod, le.RetryPeriod)
		setString(&c.LeaderElectionResourceLock, le.ResourceLock)
		setString(&c.LeaderElectionID, le.ResourceName)
	}

	if s := f.Server; s != nil {
		if w := s.Webhooks; w != nil {
			setString(&c.Webhooks.Host, w.BindAddress)
			if w.Port != nil && *w.Port != 0 {
				c.Webhooks.Port = *w.Port
			}
			setString(&c.Webhooks.CertDir, w.ServerCertDir)
			// Upstream druid always runs the webhook server it is given; ours serves the Etcd validation
			// there, whether or not the component protection is on.
			if (w.Port != nil && *w.Port != 0) || (w.ServerCertDir != nil && *w.ServerCertDir != "") {
				c.Webhooks.Enabled = true
			}
		}
		if m := s.Metrics; m != nil {
			c.MetricsBindAddress = metricsAddress(c.MetricsBindAddress, m)
		}
	}

	if ctrls := f.Controllers; ctrls != nil {
		if ctrls.DisableLeaseCache != nil {
			ignore("controllers.disableLeaseCache", *ctrls.DisableLeaseCache, reasonLeaseCache)
		}
		if e := ctrls.Etcd; e != nil {
			setIntPtr(&c.Etcd.Workers, e.ConcurrentSyncs)
			setBool(&c.Etcd.EnableEtcdSpecAutoReconcile, e.EnableEtcdSpecAutoReconcile)
			if e.DisableEtcdServiceAccountAutomount != nil {
				ignore("controllers.etcd.disableEtcdServiceAccountAutomount", *e.DisableEtcdServiceAccountAutomount, reasonAutomount)
			}
			setDuration(&c.Etcd.StatusSyncPeriod, e.EtcdStatusSyncPeriod)
			if m := e.EtcdMember; m != nil {
				setDuration(&c.Etcd.EtcdMemberNotReadyThreshold, m.NotReadyThreshold)
				setDuration(&c.Etcd.EtcdMemberUnknownThreshold, m.UnknownThreshold)
			}
		}
		if cp := ctrls.Compaction; cp != nil {
			setBool(&c.Compaction.EnableBackupCompaction, cp.Enabled)
			setIntPtr(&c.Compaction.Workers, cp.ConcurrentSyncs)
			setInt64(&c.Compaction.EventsThreshold, cp.EventsThreshold)
			setInt64(&c.Compaction.TriggerFullSnapshotThreshold, cp.TriggerFullSnapshotThreshold)
			setDuration(&c.Compaction.ActiveDeadline, cp.ActiveDeadlineDuration)
			if cp.MetricsScrapeWaitDuration != nil {
				ignore("controllers.compaction.metricsScrapeWaitDuration", cp.MetricsScrapeWaitDuration.Duration, reasonScrapeWait)
			}
		}
		if cb := ctrls.EtcdCopyBackupsTask; cb != nil {
			setBool(&c.EnableCopyBackupsTask, cb.Enabled)
			setIntPtr(&c.CopyBackupsTask.Workers, cb.ConcurrentSyncs)
		}
		if s := ctrls.Secret; s != nil {
			setIntPtr(&c.Secret.Workers, s.ConcurrentSyncs)
		}
		if o := ctrls.EtcdOpsTask; o != nil {
			setBool(&c.EtcdOpsTask.Enabled, o.Enabled)
			setIntPtr(&c.EtcdOpsTask.Workers, o.ConcurrentSyncs)
			// The upstream controller requeues a running task at this interval; ours does so only while the
			// sidecar cannot be reached, which is the same wait.
			setDuration(&c.EtcdOpsTask.RetryInterval, o.RequeueInterval)
		}
	}

	if w := f.Webhooks; w != nil && w.EtcdComponentProtection != nil {
		p := w.EtcdComponentProtection
		// The switch of the protection alone: turning it on needs the webhook server, turning it off
		// leaves the server and the Etcd validation as they are.
		setBool(&c.Webhooks.ComponentProtection, p.Enabled)
		if p.Enabled != nil && *p.Enabled {
			c.Webhooks.Enabled = true
		}
		account, err := reconcilerServiceAccount(p.ReconcilerServiceAccountFQDN, p.ServiceAccountInfo)
		if err != nil {
			errs = append(errs, err)
		}
		if account != "" {
			c.Webhooks.ReconcilerServiceAccount = account
		}
		if p.ExemptServiceAccounts != nil {
			c.Webhooks.ExemptServiceAccounts = p.ExemptServiceAccounts
		}
	}

	if len(f.FeatureGates) > 0 {
		gates := make([]string, 0, len(f.FeatureGates))
		for name, on := range f.FeatureGates {
			gates = append(gates, name+"="+strconv.FormatBool(on))
		}
		sort.Strings(gates)
		ignore("featureGates", strings.Join(gates, ","), reasonFeatureGates)
	}

	logCfg, logPath := f.Logging, "logging"
	if f.LogConfiguration != nil {
		if f.Logging != nil {
			errs = append(errs, errors.New("logging and logConfiguration are two names of the same settings; give one"))
		}
		logCfg, logPath = f.LogConfiguration, "logConfiguration"
	}
	if logCfg != nil {
		if logCfg.LogLevel != nil {
			c.Log.Level = *logCfg.LogLevel
		}
		if logCfg.LogFormat != nil {
			c.Log.Format = *logCfg.LogFormat
		}
		c.Log.source = logPath
	}
	return errors.Join(errs...)
}

// metricsAddress joins server.metrics' bindAddress and port onto the current address: a field the file
// leaves unset (or zero, as upstream druid defaults it) keeps its part of current.
func metricsAddress(current string, m *fileServer) string {
	host, port, err := net.SplitHostPort(current)
	if err != nil { // "0" (disabled) or malformed: start from the default
		host, port, _ = net.SplitHostPort(DefaultMetricsBindAddress)
	}
	if m.BindAddress != nil {
		host = *m.BindAddress
	}
	if m.Port != nil && *m.Port != 0 {
		port = strconv.Itoa(*m.Port)
	}
	return net.JoinHostPort(host, port)
}

// reconcilerServiceAccount is druid's own user from the deprecated reconcilerServiceAccountFQDN or from
// serviceAccountInfo (what the upstream chart writes); when both are given they must name the same account.
func reconcilerServiceAccount(fqdn *string, info *struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}) (string, error) {
	var fromInfo string
	if info != nil {
		if info.Name == "" || info.Namespace == "" {
			return "", fmt.Errorf("webhooks.etcdComponentProtection.serviceAccountInfo needs both name and namespace, got name %q namespace %q", info.Name, info.Namespace)
		}
		fromInfo = "system:serviceaccount:" + info.Namespace + ":" + info.Name
	}
	if fqdn == nil || *fqdn == "" {
		return fromInfo, nil
	}
	if fromInfo != "" && fromInfo != *fqdn {
		return "", fmt.Errorf("webhooks.etcdComponentProtection: reconcilerServiceAccountFQDN %q and serviceAccountInfo (%s) name different accounts", *fqdn, fromInfo)
	}
	return *fqdn, nil
}

func setString(dst *string, v *string) {
	if v != nil && *v != "" {
		*dst = *v
	}
}

func setIntPtr(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func setInt64(dst *int64, v *int64) {
	if v != nil && *v != 0 {
		*dst = *v
	}
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

func setDuration(dst *time.Duration, v *metav1.Duration) {
	if v != nil && v.Duration != 0 {
		*dst = v.Duration
	}
}
