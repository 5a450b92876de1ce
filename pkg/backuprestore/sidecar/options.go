package sidecar

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
)

// Options are the flags of `etcdbrctl server` (shared/reference/backup-restore.md); druid passes them
// (statefulset.BackupRestoreArgs).
type Options struct {
	// Etcd access.
	DataDir           string
	Endpoints         []string
	ServiceEndpoints  []string
	InsecureTransport bool
	CACert            string
	Cert              string
	Key               string

	// HTTP API.
	ServerPort int
	ServerCert string
	ServerKey  string

	// Leases.
	EnableMemberLeaseRenewal   bool
	EnableSnapshotLeaseRenewal bool
	FullSnapshotLeaseName      string
	DeltaSnapshotLeaseName     string
	HeartbeatDuration          time.Duration

	// Store and snapshots (accepted for the snapshotter; see the package documentation).
	StorageProvider          string
	StoreContainer           string
	StorePrefix              string
	StoreEndpointOverride    string
	Schedule                 string
	DeltaSnapshotPeriod      time.Duration
	DeltaSnapshotMemoryLimit int64
	GarbageCollectionPolicy  string
	MaxBackups               int
	GarbageCollectionPeriod  time.Duration
	CompressSnapshots        bool
	CompressionPolicy        string
	DefragmentationSchedule  string

	// EtcdWrapperURL is where POST /stop restarts etcd; empty means http://<host of the first endpoint>:9095.
	EtcdWrapperURL string
}

// DefaultOptions are the values used for flags druid does not pass.
func DefaultOptions() Options {
	return Options{
		DataDir:                  configmap.DataDir,
		Endpoints:                []string{"http://127.0.0.1:2379"},
		InsecureTransport:        true,
		ServerPort:               8080,
		HeartbeatDuration:        30 * time.Second,
		Schedule:                 "0 */1 * * *",
		DeltaSnapshotPeriod:      20 * time.Second,
		DeltaSnapshotMemoryLimit: 100 << 20,
		GarbageCollectionPolicy:  "Exponential",
		MaxBackups:               7,
		GarbageCollectionPeriod:  time.Minute,
		CompressionPolicy:        "gzip",
	}
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "etcd's data directory")
	fs.StringSliceVar(&o.Endpoints, "endpoints", o.Endpoints, "client URL of the local etcd member")
	fs.StringSliceVar(&o.ServiceEndpoints, "service-endpoints", o.ServiceEndpoints, "client URL of the cluster's client service")
	fs.BoolVar(&o.InsecureTransport, "insecure-transport", o.InsecureTransport, "talk to etcd without TLS")
	fs.StringVar(&o.CACert, "cacert", o.CACert, "CA bundle that verifies etcd's server certificate")
	fs.StringVar(&o.Cert, "cert", o.Cert, "client certificate for etcd")
	fs.StringVar(&o.Key, "key", o.Key, "client key for etcd")

	fs.IntVar(&o.ServerPort, "server-port", o.ServerPort, "port of the HTTP API")
	fs.StringVar(&o.ServerCert, "server-cert", o.ServerCert, "certificate of the HTTP API (enables TLS)")
	fs.StringVar(&o.ServerKey, "server-key", o.ServerKey, "key of the HTTP API")

	fs.BoolVar(&o.EnableMemberLeaseRenewal, "enable-member-lease-renewal", o.EnableMemberLeaseRenewal, "renew the member lease (needs Kubernetes)")
	fs.BoolVar(&o.EnableSnapshotLeaseRenewal, "enable-snapshot-lease-renewal", o.EnableSnapshotLeaseRenewal, "renew the snapshot leases (needs Kubernetes)")
	fs.StringVar(&o.FullSnapshotLeaseName, "full-snapshot-lease-name", o.FullSnapshotLeaseName, "lease of the last full snapshot")
	fs.StringVar(&o.DeltaSnapshotLeaseName, "delta-snapshot-lease-name", o.DeltaSnapshotLeaseName, "lease of the last delta snapshot")
	fs.DurationVar(&o.HeartbeatDuration, "k8s-heartbeat-duration", o.HeartbeatDuration, "member lease renewal period")

	fs.StringVar(&o.StorageProvider, "storage-provider", o.StorageProvider, "snapshot store provider (Local, S3, ABS, GCS, ...); empty: no backups")
	fs.StringVar(&o.StoreContainer, "store-container", o.StoreContainer, "bucket or container of the store")
	fs.StringVar(&o.StorePrefix, "store-prefix", o.StorePrefix, "prefix of the snapshots in the store")
	fs.StringVar(&o.StoreEndpointOverride, "store-endpoint-override", o.StoreEndpointOverride, "endpoint of an S3-compatible or emulated store")
	fs.StringVar(&o.Schedule, "schedule", o.Schedule, "cron schedule of full snapshots")
	fs.DurationVar(&o.DeltaSnapshotPeriod, "delta-snapshot-period", o.DeltaSnapshotPeriod, "period of delta snapshots")
	fs.Int64Var(&o.DeltaSnapshotMemoryLimit, "delta-snapshot-memory-limit", o.DeltaSnapshotMemoryLimit, "bytes of events buffered before a delta snapshot is cut")
	fs.StringVar(&o.GarbageCollectionPolicy, "garbage-collection-policy", o.GarbageCollectionPolicy, "Exponential or LimitBased")
	fs.IntVar(&o.MaxBackups, "max-backups", o.MaxBackups, "full snapshots kept by LimitBased garbage collection")
	fs.DurationVar(&o.GarbageCollectionPeriod, "garbage-collection-period", o.GarbageCollectionPeriod, "period of garbage collection")
	fs.BoolVar(&o.CompressSnapshots, "compress-snapshots", o.CompressSnapshots, "compress snapshots")
	fs.StringVar(&o.CompressionPolicy, "compression-policy", o.CompressionPolicy, "gzip, lzw or zlib")
	fs.StringVar(&o.DefragmentationSchedule, "defragmentation-schedule", o.DefragmentationSchedule, "cron schedule of defragmentation")

	fs.StringVar(&o.EtcdWrapperURL, "etcd-wrapper-url", o.EtcdWrapperURL, "base URL of the etcd wrapper (POST /stop restarts etcd)")
}

// Validate rejects inconsistent options before anything starts.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Endpoints) == 0 {
		errs = append(errs, errors.New("--endpoints is required"))
	}
	for _, e := range o.Endpoints {
		if _, err := url.Parse(e); err != nil {
			errs = append(errs, fmt.Errorf("--endpoints: %w", err))
		}
	}
	if (o.ServerCert == "") != (o.ServerKey == "") {
		errs = append(errs, errors.New("--server-cert and --server-key go together"))
	}
	if (o.Cert == "") != (o.Key == "") {
		errs = append(errs, errors.New("--cert and --key go together"))
	}
	if o.HeartbeatDuration <= 0 {
		errs = append(errs, errors.New("--k8s-heartbeat-duration must be positive"))
	}
	if o.EnableSnapshotLeaseRenewal && (o.FullSnapshotLeaseName == "" || o.DeltaSnapshotLeaseName == "") {
		errs = append(errs, errors.New("--enable-snapshot-lease-renewal needs --full-snapshot-lease-name and --delta-snapshot-lease-name"))
	}
	switch o.GarbageCollectionPolicy {
	case "Exponential", "LimitBased":
	default:
		errs = append(errs, fmt.Errorf("--garbage-collection-policy %q: want Exponential or LimitBased", o.GarbageCollectionPolicy))
	}
	switch o.CompressionPolicy {
	case "gzip", "lzw", "zlib":
	default:
		errs = append(errs, fmt.Errorf("--compression-policy %q: want gzip, lzw or zlib", o.CompressionPolicy))
	}
	for flag, schedule := range map[string]string{"--schedule": o.Schedule, "--defragmentation-schedule": o.DefragmentationSchedule} {
		if schedule == "" {
			continue
		}
		if _, err := cron.ParseStandard(schedule); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, schedule, err))
		}
	}
	return errors.Join(errs...)
}

// wrapperURL is where the etcd wrapper listens: the pod-local host of the etcd endpoint, port 9095.
func (o *Options) wrapperURL() (string, error) {
	if o.EtcdWrapperURL != "" {
		return o.EtcdWrapperURL, nil
	}
	u, err := url.Parse(o.Endpoints[0])
	if err != nil {
		return "", err
	}
	return "http://" + u.Hostname() + ":9095", nil
}
