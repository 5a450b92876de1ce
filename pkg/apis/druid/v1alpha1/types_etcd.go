package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Etcd is the desired state of one etcd cluster (single- or multi-node) together with its backup
// configuration; etcd-druid turns it into a StatefulSet with an etcd and a backup-restore container per member.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=etcd
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Quorate",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="All Members Ready",type=string,JSONPath=`.status.conditions[?(@.type=="AllMembersReady")].status`
// +kubebuilder:printcolumn:name="Backup Ready",type=string,JSONPath=`.status.conditions[?(@.type=="BackupReady")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Cluster Size",type=integer,JSONPath=`.spec.replicas`,priority=1
// +kubebuilder:printcolumn:name="Current Replicas",type=integer,JSONPath=`.status.currentReplicas`,priority=1
// +kubebuilder:printcolumn:name="Ready Replicas",type=integer,JSONPath=`.status.readyReplicas`,priority=1
// +kubebuilder:printcolumn:name="Full Snapshot Revision",type=integer,JSONPath=`.status.lastFullSnapshot.endRevision`,priority=1
// +kubebuilder:printcolumn:name="Last Full Snapshot",type=date,JSONPath=`.status.lastFullSnapshot.timestamp`,priority=1
// +kubebuilder:printcolumn:name="Delta Snapshot Revision",type=integer,JSONPath=`.status.lastDeltaSnapshot.endRevision`,priority=1
// +kubebuilder:printcolumn:name="Last Delta Snapshot",type=date,JSONPath=`.status.lastDeltaSnapshot.timestamp`,priority=1
type Etcd struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EtcdSpec   `json:"spec"`
	Status EtcdStatus `json:"status,omitempty"`
}

// EtcdList is a list of Etcd resources.
//
// +kubebuilder:object:root=true
type EtcdList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Etcd `json:"items"`
}

// EtcdSpec is the desired state of an etcd cluster.
//
// The immutability rules live here rather than on the fields because an optional field that is added or
// removed has no old value to compare with on the field itself.
//
// +kubebuilder:validation:XValidation:rule="has(self.storageClass) == has(oldSelf.storageClass) && (!has(self.storageClass) || self.storageClass == oldSelf.storageClass)",message="spec.storageClass is immutable: it cannot be set, changed or removed after creation (create a new Etcd to use another storage class)",fieldPath=".storageClass",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="has(self.volumeClaimTemplate) == has(oldSelf.volumeClaimTemplate) && (!has(self.volumeClaimTemplate) || self.volumeClaimTemplate == oldSelf.volumeClaimTemplate)",message="spec.volumeClaimTemplate is immutable: it cannot be set, changed or removed after creation",fieldPath=".volumeClaimTemplate",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="has(self.memberNamePrefix) == has(oldSelf.memberNamePrefix) && (!has(self.memberNamePrefix) || self.memberNamePrefix == oldSelf.memberNamePrefix)",message="spec.memberNamePrefix is immutable: it cannot be set, changed or removed after creation",fieldPath=".memberNamePrefix",reason=FieldValueForbidden
type EtcdSpec struct {
	// Selector is a label query over the pods of this cluster.
	// Deprecated: the StatefulSet selector is derived from the Etcd name; kept so that stored objects still read.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Labels are applied to the etcd pods.
	Labels map[string]string `json:"labels"`
	// Annotations are applied to the etcd pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Etcd configures the etcd container.
	Etcd EtcdConfig `json:"etcd"`
	// Backup configures the backup-restore sidecar; it may be empty (no store, no backups).
	Backup BackupSpec `json:"backup"`
	// SharedConfig holds settings that both etcd and the sidecar must agree on.
	// +optional
	SharedConfig *SharedConfig `json:"sharedConfig,omitempty"`
	// SchedulingConstraints place the etcd pods.
	// +optional
	SchedulingConstraints SchedulingConstraints `json:"schedulingConstraints,omitempty"`
	// Replicas is the number of members: 0 hibernates the cluster. An odd number is recommended:
	// an even number is accepted, as the upstream etcd-druid accepts it, but tolerates no more failed
	// members than the odd number below it; the validation webhook warns about it. The schema bounds it
	// (validation.MaxReplicas) because the scale subresource bypasses the validation webhook.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	Replicas int32 `json:"replicas"`
	// PriorityClassName is the priority class of the etcd pods.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
	// StorageClass of the data volumes; immutable. Nil means the cluster's default storage class.
	// +optional
	StorageClass *string `json:"storageClass,omitempty"`
	// StorageCapacity of each member's data volume (default 16Gi).
	// +optional
	StorageCapacity *resource.Quantity `json:"storageCapacity,omitempty"`
	// VolumeClaimTemplate is the name of the StatefulSet's PVC template; immutable; defaults to the Etcd name.
	// +optional
	VolumeClaimTemplate *string `json:"volumeClaimTemplate,omitempty"`
	// RunAsRoot runs the etcd pods as root (default false: uid 65532).
	// +optional
	RunAsRoot *bool `json:"runAsRoot,omitempty"`
	// MemberNamePrefix prefixes the etcd member names and the member leases (`<prefix>-<pod>`); the etcd
	// configuration in the ConfigMap stays keyed by pod name and carries it as `member-name-prefix`, as the
	// upstream etcd-druid renders it. Immutable.
	// +optional
	MemberNamePrefix *string `json:"memberNamePrefix,omitempty"`
}

// SchedulingConstraints are the affinity and spread constraints applied to the etcd pods.
type SchedulingConstraints struct {
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}

// SharedConfig holds settings that etcd and the backup-restore sidecar must both know.
type SharedConfig struct {
	// AutoCompactionMode is etcd's auto-compaction mode (default periodic).
	// +kubebuilder:validation:Enum=periodic;revision
	// +optional
	AutoCompactionMode *CompactionMode `json:"autoCompactionMode,omitempty"`
	// AutoCompactionRetention is etcd's auto-compaction retention (default 30m).
	// +optional
	AutoCompactionRetention *string `json:"autoCompactionRetention,omitempty"`
}

// CompactionMode is etcd's auto-compaction mode.
type CompactionMode string

const (
	// Periodic compacts on a time window.
	Periodic CompactionMode = "periodic"
	// Revision compacts on a revision window.
	Revision CompactionMode = "revision"
)

// MetricsLevel is the granularity of etcd's metrics.
type MetricsLevel string

const (
	// Basic exports the default etcd metrics.
	Basic MetricsLevel = "basic"
	// Extensive adds histograms for gRPC calls.
	Extensive MetricsLevel = "extensive"
)

// EtcdConfig configures the etcd container of each member.
type EtcdConfig struct {
	// Quota is the backend quota (default 8Gi).
	// +optional
	Quota *resource.Quantity `json:"quota,omitempty"`
	// SnapshotCount is the number of committed transactions that trigger a raft snapshot (default 10000).
	// +kubebuilder:validation:Minimum=1
	// +optional
	SnapshotCount *int64 `json:"snapshotCount,omitempty"`
	// DefragmentationSchedule is a cron schedule for defragmenting the members.
	// +optional
	DefragmentationSchedule *string `json:"defragmentationSchedule,omitempty"`
	// ServerPort is the peer port (default 2380).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	ServerPort *int32 `json:"serverPort,omitempty"`
	// ClientPort is the client port (default 2379).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	ClientPort *int32 `json:"clientPort,omitempty"`
	// WrapperPort is the etcd wrapper's port for /readyz and /stop (default 9095).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	WrapperPort *int32 `json:"wrapperPort,omitempty"`
	// Image overrides druid's configured etcd image.
	// +optional
	Image *string `json:"image,omitempty"`
	// AuthSecretRef references a secret with etcd user credentials.
	// +optional
	AuthSecretRef *corev1.SecretReference `json:"authSecretRef,omitempty"`
	// Metrics is the metrics level (default basic).
	// +kubebuilder:validation:Enum=basic;extensive
	// +optional
	Metrics *MetricsLevel `json:"metrics,omitempty"`
	// Resources of the etcd container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// ClientUrlTLS enables TLS for client traffic.
	// +optional
	ClientUrlTLS *TLSConfig `json:"clientUrlTls,omitempty"`
	// PeerUrlTLS enables TLS for peer traffic; enabling it on a running cluster is done in place by druid
	// and the sidecar.
	// +optional
	PeerUrlTLS *PeerTLSConfig `json:"peerUrlTls,omitempty"`
	// EtcdDefragTimeout bounds one defragmentation (default 15m).
	// +optional
	EtcdDefragTimeout *metav1.Duration `json:"etcdDefragTimeout,omitempty"`
	// HeartbeatDuration is the member lease renewal period (default 10s).
	// +optional
	HeartbeatDuration *metav1.Duration `json:"heartbeatDuration,omitempty"`
	// ClientService customizes the client Service.
	// +optional
	ClientService *ClientService `json:"clientService,omitempty"`
	// EnableGRPCGateway enables etcd's gRPC gateway.
	// +optional
	EnableGRPCGateway *bool `json:"enableGRPCGateway,omitempty"`
	// AdditionalAdvertisePeerURLs are peer URLs a member advertises besides its peer Service URL (the
	// upstream etcd-druid's field, used for cross-cluster migration): the URLs of the entry whose memberName
	// is a pod's name follow that pod's peer Service URL in the etcd configuration's
	// initial-advertise-peer-urls and initial-cluster (docs/compatibility.md, "Etcd API").
	// +optional
	AdditionalAdvertisePeerURLs []MemberPeerURLs `json:"additionalAdvertisePeerUrls,omitempty"`
	// BackendBboltFreelistType is etcd's --backend-bbolt-freelist-type (`map` or `array`); written into the
	// etcd configuration the sidecar serves. Unset leaves etcd's default.
	// +kubebuilder:validation:Enum=map;array
	// +optional
	BackendBboltFreelistType *BboltFreelistType `json:"backendBboltFreelistType,omitempty"`
	// BootstrapWithExistingCluster lets the members join an existing etcd cluster instead of bootstrapping
	// a new one (the upstream etcd-druid's field). Stored so that it round-trips; this druid does not act
	// on it (docs/compatibility.md, "Etcd API").
	// +optional
	BootstrapWithExistingCluster *BootstrapWithExistingCluster `json:"bootstrapWithExistingCluster,omitempty"`
}

// BboltFreelistType is the type of bbolt's freelist.
type BboltFreelistType string

const (
	// BboltFreelistMap keeps the freelist as a hash map (etcd's default).
	BboltFreelistMap BboltFreelistType = "map"
	// BboltFreelistArray keeps the freelist as an array.
	BboltFreelistArray BboltFreelistType = "array"
)

// MemberPeerURLs are additional peer URLs of one member.
type MemberPeerURLs struct {
	// MemberName is the member (pod) name.
	MemberName string `json:"memberName"`
	// URLs are the additional peer URLs.
	// +optional
	URLs []string `json:"urls,omitempty"`
}

// BootstrapWithExistingCluster names the members of an existing cluster to join.
type BootstrapWithExistingCluster struct {
	// Members are the existing cluster's members.
	// +optional
	Members []BootstrapExistingMember `json:"members,omitempty"`
	// ClientEndpoints are client endpoints of the existing cluster.
	// +optional
	ClientEndpoints []string `json:"clientEndpoints,omitempty"`
}

// BootstrapExistingMember is one member of an existing cluster.
type BootstrapExistingMember struct {
	// Name is the member name.
	Name string `json:"name"`
	// PeerURLs are the member's peer URLs.
	// +optional
	PeerURLs []string `json:"peerUrls,omitempty"`
}

// ClientService customizes the `<name>-client` Service.
type ClientService struct {
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// TrafficDistribution is copied to the Service's spec.trafficDistribution.
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
}

// BackupSpec configures the backup-restore sidecar.
//
// +kubebuilder:validation:XValidation:rule="!has(self.deltaSnapshotPeriod) || !has(self.garbageCollectionPeriod) || duration(self.deltaSnapshotPeriod) < duration(self.garbageCollectionPeriod)",message="spec.backup.deltaSnapshotPeriod must be shorter than spec.backup.garbageCollectionPeriod, otherwise garbage collection removes deltas before the next full snapshot covers them",fieldPath=".deltaSnapshotPeriod"
type BackupSpec struct {
	// Port is the sidecar's HTTP port (default 8080).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`
	// TLS secures the sidecar's HTTP server.
	// +optional
	TLS *TLSConfig `json:"tls,omitempty"`
	// Image overrides druid's configured backup-restore image.
	// +optional
	Image *string `json:"image,omitempty"`
	// Store is the object store for snapshots; nil means no backups.
	// +optional
	Store *StoreSpec `json:"store,omitempty"`
	// Resources of the backup-restore container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// SnapshotCompaction configures the compaction Jobs.
	// +optional
	SnapshotCompaction *CompactionSpec `json:"snapshotCompaction,omitempty"`
	// FullSnapshotSchedule is the cron schedule of full snapshots.
	// +optional
	FullSnapshotSchedule *string `json:"fullSnapshotSchedule,omitempty"`
	// GarbageCollectionPolicy selects how old snapshots are removed.
	// +kubebuilder:validation:Enum=Exponential;LimitBased
	// +optional
	GarbageCollectionPolicy *GarbageCollectionPolicy `json:"garbageCollectionPolicy,omitempty"`
	// MaxBackupsLimitBasedGC is the number of full snapshots LimitBased keeps (default 7).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxBackupsLimitBasedGC *int32 `json:"maxBackupsLimitBasedGC,omitempty"`
	// GarbageCollectionPeriod is how often garbage collection runs.
	// +optional
	GarbageCollectionPeriod *metav1.Duration `json:"garbageCollectionPeriod,omitempty"`
	// DeltaSnapshotPeriod is how often a delta snapshot is cut.
	// +optional
	DeltaSnapshotPeriod *metav1.Duration `json:"deltaSnapshotPeriod,omitempty"`
	// DeltaSnapshotMemoryLimit cuts a delta early when its events exceed it (default 100Mi).
	// +optional
	DeltaSnapshotMemoryLimit *resource.Quantity `json:"deltaSnapshotMemoryLimit,omitempty"`
	// DeltaSnapshotRetentionPeriod keeps deltas at least this long.
	// +optional
	DeltaSnapshotRetentionPeriod *metav1.Duration `json:"deltaSnapshotRetentionPeriod,omitempty"`
	// SnapshotCompression compresses snapshots before upload.
	// +optional
	SnapshotCompression *CompressionSpec `json:"compression,omitempty"`
	// EnableProfiling serves pprof on the sidecar.
	// +optional
	EnableProfiling *bool `json:"enableProfiling,omitempty"`
	// EtcdSnapshotTimeout bounds one snapshot (default 15m).
	// +optional
	EtcdSnapshotTimeout *metav1.Duration `json:"etcdSnapshotTimeout,omitempty"`
	// LeaderElection tunes the backup leader election.
	// +optional
	LeaderElection *LeaderElectionSpec `json:"leaderElection,omitempty"`
}

// GarbageCollectionPolicy names a snapshot garbage collection strategy.
type GarbageCollectionPolicy string

const (
	// GarbageCollectionPolicyExponential keeps hourly, daily and weekly full snapshots.
	GarbageCollectionPolicyExponential GarbageCollectionPolicy = "Exponential"
	// GarbageCollectionPolicyLimitBased keeps the last maxBackupsLimitBasedGC full snapshots.
	GarbageCollectionPolicyLimitBased GarbageCollectionPolicy = "LimitBased"
)

// CompactionSpec configures snapshot compaction (druid's compaction controller).
type CompactionSpec struct {
	// Resources of the compaction Job.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// EventsThreshold is the number of delta events since the last full snapshot that starts a compaction.
	// +kubebuilder:validation:Minimum=1
	// +optional
	EventsThreshold *int64 `json:"eventsThreshold,omitempty"`
	// TriggerFullSnapshotThreshold is the upper threshold of delta events since the last full snapshot: at or
	// beyond it (or after a compaction Job ran out of its deadline) druid gives up on a compaction Job and asks
	// the backup leader's sidecar for a full snapshot instead (GET /snapshot/full on the client Service's
	// backup port, presenting spec.backup.tls.clientTLSSecretRef). Without such a client certificate druid
	// cannot make that request and starts the compaction Job as below the threshold.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TriggerFullSnapshotThreshold *int64 `json:"triggerFullSnapshotThreshold,omitempty"`
}

// CompressionPolicy names a snapshot compression algorithm.
type CompressionPolicy string

const (
	// GzipCompression writes `.gz` snapshots.
	GzipCompression CompressionPolicy = "gzip"
	// LzwCompression writes `.Z` snapshots.
	LzwCompression CompressionPolicy = "lzw"
	// ZlibCompression writes `.zlib` snapshots.
	ZlibCompression CompressionPolicy = "zlib"
)

// CompressionSpec enables snapshot compression.
type CompressionSpec struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +kubebuilder:validation:Enum=gzip;lzw;zlib
	// +optional
	Policy *CompressionPolicy `json:"policy,omitempty"`
}

// LeaderElectionSpec tunes the sidecar's backup leader election.
type LeaderElectionSpec struct {
	// ReelectionPeriod is how often the sidecar checks who leads.
	// +optional
	ReelectionPeriod *metav1.Duration `json:"reelectionPeriod,omitempty"`
	// EtcdConnectionTimeout bounds the sidecar's calls to etcd during election.
	// +optional
	EtcdConnectionTimeout *metav1.Duration `json:"etcdConnectionTimeout,omitempty"`
}
