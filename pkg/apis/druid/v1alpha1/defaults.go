package v1alpha1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Defaults of the Etcd API (upstream etcd-druid's API). They are applied in code, not by the CRD, so that
// an Etcd reads back exactly as it was written and existing objects keep their meaning.
const (
	DefaultStorageCapacity          = "16Gi"
	DefaultQuota                    = "8Gi"
	DefaultSnapshotCount            = int64(10000)
	DefaultServerPort               = etcdpod.DefaultServerPort
	DefaultClientPort               = etcdpod.DefaultClientPort
	DefaultWrapperPort              = etcdpod.DefaultWrapperPort
	DefaultBackupPort               = etcdpod.DefaultBackupPort
	DefaultMetrics                  = Basic
	DefaultEtcdDefragTimeout        = 15 * time.Minute
	DefaultHeartbeatDuration        = 10 * time.Second
	DefaultMaxBackupsLimitBasedGC   = int32(7)
	DefaultDeltaSnapshotMemoryLimit = "100Mi"
	DefaultEtcdSnapshotTimeout      = 15 * time.Minute
	DefaultCADataKey                = "ca.crt"
	DefaultAutoCompactionMode       = Periodic
	DefaultAutoCompactionRetention  = "30m"
	// DefaultRunAsUser is the uid of the etcd pods unless spec.runAsRoot is true.
	DefaultRunAsUser = int64(65532)
)

// Defaults upstream druid applies while rendering, kept here with the others.
const (
	// DefaultGarbageCollectionPolicy is upstream druid's, which it passes to the sidecar; the
	// sidecar's own default (Exponential) applies only where no druid renders the flags.
	DefaultGarbageCollectionPolicy = GarbageCollectionPolicyLimitBased
	// DefaultCPURequest and DefaultMemoryRequest are requested for the etcd and the backup-restore
	// container when the Etcd sets no resources, so that its pods are not best-effort, evicted first.
	DefaultCPURequest    = "50m"
	DefaultMemoryRequest = "128Mi"
)

// Defaulted is the copy of e that controllers render and decide on: SetDefaults on a deep copy, so that
// the stored object never gets defaults written back.
func Defaulted(e *Etcd) *Etcd {
	c := e.DeepCopy()
	SetDefaults(c)
	return c
}

// SetDefaults fills every unset field that has a documented default. Controllers call it on a deep copy
// before rendering components, so that the stored object is never rewritten with defaults.
func SetDefaults(e *Etcd) {
	s := &e.Spec
	setQuantity(&s.StorageCapacity, DefaultStorageCapacity)
	if s.VolumeClaimTemplate == nil {
		s.VolumeClaimTemplate = ptr.To(e.Name)
	}
	setDefault(&s.RunAsRoot, false)
	setEtcdConfigDefaults(&s.Etcd)
	setBackupDefaults(&s.Backup)
	setDefault(&s.Common.AutoCompactionMode, DefaultAutoCompactionMode)
	setDefault(&s.Common.AutoCompactionRetention, DefaultAutoCompactionRetention)
}

func setEtcdConfigDefaults(c *EtcdConfig) {
	setQuantity(&c.Quota, DefaultQuota)
	setDefault(&c.SnapshotCount, DefaultSnapshotCount)
	setDefault(&c.ServerPort, DefaultServerPort)
	setDefault(&c.ClientPort, DefaultClientPort)
	setDefault(&c.WrapperPort, DefaultWrapperPort)
	setDefault(&c.Metrics, DefaultMetrics)
	setDefault(&c.EtcdDefragTimeout, metav1.Duration{Duration: DefaultEtcdDefragTimeout})
	setDefault(&c.HeartbeatDuration, metav1.Duration{Duration: DefaultHeartbeatDuration})
	setResources(&c.Resources)
	if c.ClientUrlTLS != nil {
		setTLSDefaults(c.ClientUrlTLS)
	}
	if c.PeerUrlTLS != nil {
		setTLSDefaults(&c.PeerUrlTLS.TLSConfig)
	}
}

func setBackupDefaults(b *BackupSpec) {
	setDefault(&b.Port, DefaultBackupPort)
	setDefault(&b.GarbageCollectionPolicy, DefaultGarbageCollectionPolicy)
	setDefault(&b.MaxBackupsLimitBasedGC, DefaultMaxBackupsLimitBasedGC)
	setResources(&b.Resources)
	setQuantity(&b.DeltaSnapshotMemoryLimit, DefaultDeltaSnapshotMemoryLimit)
	setDefault(&b.EtcdSnapshotTimeout, metav1.Duration{Duration: DefaultEtcdSnapshotTimeout})
	if b.TLS != nil {
		setTLSDefaults(b.TLS)
	}
}

func setTLSDefaults(t *TLSConfig) {
	setDefault(&t.TLSCASecretRef.DataKey, DefaultCADataKey)
}

// setDefault points *field at value when it is nil.
func setDefault[T any](field **T, value T) {
	if *field == nil {
		*field = &value
	}
}

// setResources requests the default CPU and memory when no resources are set; set resources, even
// empty ones, are kept as they are.
func setResources(field **corev1.ResourceRequirements) {
	if *field == nil {
		*field = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(DefaultCPURequest),
			corev1.ResourceMemory: resource.MustParse(DefaultMemoryRequest),
		}}
	}
}

func setQuantity(field **resource.Quantity, value string) {
	if *field == nil {
		q := resource.MustParse(value)
		*field = &q
	}
}
