package etcd

import (
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Wire values of the Etcd spec Gardener writes (as gardenlet writes them).
const (
	clientPort  = etcdpod.DefaultClientPort
	serverPort  = etcdpod.DefaultServerPort
	wrapperPort = etcdpod.DefaultWrapperPort
	backupPort  = etcdpod.DefaultBackupPort

	// PeerTLSChecksumAnnotation is a pod annotation (spec.annotations) with a hash of the peer CA bundle and
	// the peer certificate. Members read both only at start, so a changed bundle or certificate must roll the
	// pods; a changed pod annotation is what makes druid roll them. It is written only for TLS sources that
	// keep their secret names when the content changes (see ContentNamedTLS).
	PeerTLSChecksumAnnotation = "checksum/etcd-peer-tls"

	labelGardenerRole     = "gardener.cloud/role"
	labelGardenerRoleCP   = "controlplane"
	labelRole             = "role"
	labelApp              = "app"
	labelAppEtcd          = "etcd-statefulset"
	labelToDNS            = "networking.gardener.cloud/to-dns"
	labelToPublicNetworks = "networking.gardener.cloud/to-public-networks"
	labelToPrivateNets    = "networking.gardener.cloud/to-private-networks"
	// labelToRuntimeAPIServer lets the pods reach the seed's kube-apiserver (the sidecar's leases and
	// member status); a Gardener seed's network policies deny it otherwise.
	labelToRuntimeAPIServer = "networking.gardener.cloud/to-runtime-apiserver"
	labelAllowed            = "allowed"
)

// clientServiceAnnotations are what Gardener's resource manager reads from the client Service to write
// its network policies: the seed's Prometheus (garden namespace) may scrape etcd (2379) and the sidecar
// (8080), and the kube-apiservers of all shoot namespaces may reach the Service through the all-shoots
// alias.
var clientServiceAnnotations = map[string]string{
	"networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports": fmt.Sprintf(`[{"protocol":"TCP","port":%d},{"protocol":"TCP","port":%d}]`, clientPort, backupPort),
	"networking.resources.gardener.cloud/namespace-selectors":                   `[{"matchLabels":{"kubernetes.io/metadata.name":"garden"}}]`,
	"networking.resources.gardener.cloud/pod-label-selector-namespace-alias":    "all-shoots",
}

// peerNetworkLabels open, through Gardener's resource manager, the traffic between the members of a
// multi-member etcd: client, peer and sidecar ports of the client Service etcd-<role>-client.
func peerNetworkLabels(role string) map[string]string {
	out := map[string]string{}
	for _, port := range []int32{clientPort, serverPort, backupPort} {
		out[fmt.Sprintf("networking.resources.gardener.cloud/to-etcd-%s-client-tcp-%d", role, port)] = labelAllowed
	}
	return out
}

var (
	defaultQuota             = resource.MustParse("8Gi")
	deltaSnapshotMemoryLimit = resource.MustParse("100Mi")
	garbageCollectionPeriod  = 12 * time.Hour
	defaultStorageByClass    = map[Class]resource.Quantity{ClassImportant: resource.MustParse("25Gi"), ClassNormal: resource.MustParse("10Gi")}
	autoCompactionRetention  = "30m"
	// compactionResources are the requests of druid's compaction Job (Gardener's values): it restores the
	// whole database and replays the deltas in memory.
	compactionResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m"), corev1.ResourceMemory: resource.MustParse("3Gi")}

	// etcdFloorByClass is the VPA's floor for the etcd container (vpa.go) unless Values.MinAllowed
	// replaces it: memory only, CPU is left to the VPA.
	etcdFloorByClass = map[Class]corev1.ResourceList{
		ClassImportant: {corev1.ResourceMemory: resource.MustParse("300M")},
		ClassNormal:    {corev1.ResourceMemory: resource.MustParse("60M")},
	}
	// etcdRequestsByClass are Gardener's requests of the etcd container, raised to the floor where it is
	// higher. The VPA changes the pods' requests, never the Etcd's, so these are what a new or rolled
	// member starts with.
	etcdRequestsByClass = map[Class]corev1.ResourceList{
		ClassImportant: {corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("500M")},
		ClassNormal:    {corev1.ResourceCPU: resource.MustParse("30m"), corev1.ResourceMemory: resource.MustParse("150M")},
	}
	// backupRestoreRequestsByClass are the sidecar's requests (Gardener's values; the VPA leaves this
	// container alone).
	backupRestoreRequestsByClass = map[Class]corev1.ResourceList{
		ClassImportant: {corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("80Mi")},
		ClassNormal:    {corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("40Mi")},
	}
	autoCompactionModePeriodic = druidv1alpha1.Periodic
	// metricsByClass: the important etcd exports its extensive metrics (request latencies per method).
	metricsByClass = map[Class]druidv1alpha1.MetricsLevel{ClassImportant: druidv1alpha1.Extensive, ClassNormal: druidv1alpha1.Basic}
)

// safeToEvictAnnotation is the cluster-autoscaler's pod annotation; "false" keeps a node from being
// scaled down while the pod runs on it.
const safeToEvictAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict"

// etcdFloor is the class's floor with Values.MinAllowed replacing it per resource.
func (e *etcd) etcdFloor() corev1.ResourceList {
	floor := etcdFloorByClass[e.values.Class].DeepCopy()
	maps.Copy(floor, e.values.MinAllowed)
	return floor
}

// etcdRequests are the class's requests, each raised to the floor where that is higher.
func (e *etcd) etcdRequests() corev1.ResourceList {
	requests := etcdRequestsByClass[e.values.Class].DeepCopy()
	for name, floor := range e.etcdFloor() {
		if have, ok := requests[name]; !ok || floor.Cmp(have) > 0 {
			requests[name] = floor.DeepCopy()
		}
	}
	return requests
}

// setEvictionAnnotations says who may evict the members. etcd-events (class normal) holds nothing worth
// an outage of the control plane: druid lets its PodDisruptionBudget evict unhealthy members. A single
// important member is the shoot's API: the cluster-autoscaler must not drain its node. With high
// availability the PodDisruptionBudget protects the quorum, so the autoscaler may.
func (e *etcd) setEvictionAnnotations(obj *druidv1alpha1.Etcd) {
	if e.values.Class == ClassNormal {
		metav1.SetMetaDataAnnotation(&obj.ObjectMeta, druidv1alpha1.AllowUnhealthyPodEvictionAnnotation, "")
	}
	if e.values.Class == ClassImportant && !e.values.HighAvailability {
		if obj.Spec.Annotations == nil {
			obj.Spec.Annotations = map[string]string{}
		}
		obj.Spec.Annotations[safeToEvictAnnotation] = "false"
		return
	}
	delete(obj.Spec.Annotations, safeToEvictAnnotation)
}

// plan is what Deploy settled before building the Etcd: the merged replicas, whether peers talk TLS, the
// backup store and the schedules.
type plan struct {
	replicas        int32
	peerTLS         bool
	store           *druidv1alpha1.StoreSpec
	defragmentation string
	fullSnapshot    string
	// peerTLSChecksum is the value of PeerTLSChecksumAnnotation; empty leaves the annotation as it is.
	peerTLSChecksum string
	// trafficDistribution of the client Service (routing.go); nil removes it.
	trafficDistribution *string
	// tls are the secrets the TLS source returned (tls_source.go).
	tls TLSSecretRefs
}

// desiredReplicas keeps what the object has unless Values say otherwise; a single member becomes three when
// high availability is asked for, which is the whole non-HA → HA transition from Gardener's side.
func (e *etcd) desiredReplicas(existing *druidv1alpha1.Etcd) int32 {
	switch {
	case e.values.Replicas != nil:
		return *e.values.Replicas
	case existing == nil && e.values.HighAvailability:
		return 3
	case existing == nil:
		return 1
	case existing.Spec.Replicas == 1 && e.values.HighAvailability:
		return 3
	}
	return existing.Spec.Replicas
}

// needsPeerTLS: peers of a multi-member cluster talk TLS, and once enabled peer TLS is never switched off.
func needsPeerTLS(existing *druidv1alpha1.Etcd, highAvailability bool, replicas int32) bool {
	return highAvailability || replicas > 1 || (existing != nil && existing.Spec.Etcd.PeerUrlTLS != nil)
}

// VolumeClaimTemplateName is the PVC template Gardener gives an important Etcd of a role, `<role>-etcd`:
// its volumes are `main-etcd-etcd-main-<i>` as they were before druid, so landscapes keep their PVCs.
func VolumeClaimTemplateName(role string) string { return role + "-etcd" }

// claimTemplateName is the PVC template of a new Etcd as Gardener names it: VolumeClaimTemplateName for an
// important Etcd, the Etcd's own name for a normal one (etcd-events). It is set only on new Etcds: the field
// is immutable, and an existing Etcd's members' PVCs carry the name it has (or the Etcd name).
func (e *etcd) claimTemplateName() string {
	if e.values.Class == ClassImportant {
		return VolumeClaimTemplateName(e.values.Role)
	}
	return e.name()
}

// build returns the Etcd to write: the existing object (so fields owned by others survive) with every field
// this component owns set from the plan.
func (e *etcd) build(existing *druidv1alpha1.Etcd, p plan) *druidv1alpha1.Etcd {
	obj := e.emptyEtcd()
	if existing != nil {
		obj = existing.DeepCopy()
	}
	metav1.SetMetaDataLabel(&obj.ObjectMeta, labelGardenerRole, labelGardenerRoleCP)
	metav1.SetMetaDataLabel(&obj.ObjectMeta, labelRole, e.values.Role)
	spec := &obj.Spec
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	maps.Copy(spec.Labels, map[string]string{
		labelGardenerRole:       labelGardenerRoleCP,
		labelRole:               e.values.Role,
		labelApp:                labelAppEtcd,
		labelToDNS:              labelAllowed,
		labelToPublicNetworks:   labelAllowed,
		labelToPrivateNets:      labelAllowed,
		labelToRuntimeAPIServer: labelAllowed,
	})
	spec.Replicas = p.replicas
	spec.SchedulingConstraints.TopologySpreadConstraints = spreadConstraints(existing, obj, p.replicas, e.values.Zones, e.values.FailureToleranceType)
	spec.PriorityClassName = ptr.To(e.values.PriorityClassName)
	if existing == nil {
		spec.StorageClass = e.values.StorageClass
		spec.VolumeClaimTemplate = ptr.To(e.claimTemplateName())
		if e.values.MemberNamePrefix != "" {
			spec.MemberNamePrefix = ptr.To(e.values.MemberNamePrefix)
		}
	}
	spec.StorageCapacity = e.storageCapacity(existing)
	spec.Common = druidv1alpha1.SharedConfig{AutoCompactionMode: &autoCompactionModePeriodic, AutoCompactionRetention: &autoCompactionRetention}

	spec.Etcd.ClientPort = ptr.To(clientPort)
	spec.Etcd.ServerPort = ptr.To(serverPort)
	spec.Etcd.WrapperPort = ptr.To(wrapperPort)
	spec.Etcd.Quota = ptr.To(defaultQuota)
	spec.Etcd.Metrics = ptr.To(metricsByClass[e.values.Class])
	spec.Etcd.DefragmentationSchedule = ptr.To(p.defragmentation)
	spec.Etcd.ClientUrlTLS = clientTLS(e.namespace, p.tls)
	if spec.Etcd.ClientService == nil {
		spec.Etcd.ClientService = &druidv1alpha1.ClientService{}
	}
	if spec.Etcd.ClientService.Annotations == nil {
		spec.Etcd.ClientService.Annotations = map[string]string{}
	}
	maps.Copy(spec.Etcd.ClientService.Annotations, clientServiceAnnotations)
	spec.Etcd.ClientService.TrafficDistribution = p.trafficDistribution
	// Written on every Deploy, as Gardener does: the class (and the floor) decide, not what an earlier
	// writer left.
	spec.Etcd.Resources = &corev1.ResourceRequirements{Requests: e.etcdRequests()}
	e.setPeerTLS(obj, p.peerTLS, p.tls, p.peerTLSChecksum)

	spec.Backup.Port = ptr.To(backupPort)
	spec.Backup.TLS = clientTLS(e.namespace, p.tls)
	spec.Backup.Resources = &corev1.ResourceRequirements{Requests: backupRestoreRequestsByClass[e.values.Class].DeepCopy()}
	e.setEvictionAnnotations(obj)
	// As Gardener does on every Etcd, backed up or not (without a store they are simply not used): gzip
	// compression of the snapshots, and the compaction Job's resources. Thresholds someone set on the
	// object are kept; unset, druid's defaults apply (1,000,000 and 3,000,000 delta events).
	spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)}
	spec.Backup.SnapshotCompaction = snapshotCompaction(spec.Backup.SnapshotCompaction)
	spec.Backup.Store = p.store
	if p.store != nil {
		spec.Backup.FullSnapshotSchedule = ptr.To(p.fullSnapshot)
		spec.Backup.DeltaSnapshotPeriod = &metav1.Duration{Duration: e.deltaSnapshotPeriod()}
		spec.Backup.DeltaSnapshotMemoryLimit = ptr.To(deltaSnapshotMemoryLimit)
		if retention := e.deltaSnapshotRetentionPeriod(); retention != nil {
			spec.Backup.DeltaSnapshotRetentionPeriod = retention
		}
		spec.Backup.LeaderElection = e.values.BackupLeaderElection.DeepCopy()
		spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential)
		spec.Backup.GarbageCollectionPeriod = &metav1.Duration{Duration: garbageCollectionPeriod}
	} else {
		spec.Backup.DeltaSnapshotRetentionPeriod = nil
		spec.Backup.LeaderElection = nil
	}
	return obj
}

// snapshotCompaction is the existing compaction spec with Gardener's Job resources.
func snapshotCompaction(existing *druidv1alpha1.SnapshotCompactionSpec) *druidv1alpha1.SnapshotCompactionSpec {
	c := &druidv1alpha1.SnapshotCompactionSpec{}
	if existing != nil {
		c = existing.DeepCopy()
	}
	c.Resources = &corev1.ResourceRequirements{Requests: compactionResources.DeepCopy()}
	return c
}

// setPeerTLS configures peer TLS with the TLS source's peer secrets (or leaves it off), the pod annotation
// that rolls the members when the peer bundle or certificate changes (an empty checksum leaves it as obj has
// it), and the pod labels that let the
// members reach each other (Gardener writes them with high availability; here they go with peer TLS, which
// also covers a cluster scaled out without it).
func (e *etcd) setPeerTLS(obj *druidv1alpha1.Etcd, peerTLS bool, refs TLSSecretRefs, checksum string) {
	if !peerTLS {
		obj.Spec.Etcd.PeerUrlTLS = nil
		return
	}
	obj.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: refs.PeerCA.Name, Namespace: e.namespace}, DataKey: ptr.To(refs.PeerCA.DataKey)},
		ServerTLSSecretRef: corev1.SecretReference{Name: refs.PeerServer, Namespace: e.namespace},
	}}
	if checksum != "" {
		if obj.Spec.Annotations == nil {
			obj.Spec.Annotations = map[string]string{}
		}
		obj.Spec.Annotations[PeerTLSChecksumAnnotation] = checksum
	}
	if obj.Spec.Labels == nil {
		obj.Spec.Labels = map[string]string{}
	}
	maps.Copy(obj.Spec.Labels, peerNetworkLabels(e.values.Role))
}

// storageCapacity is the wanted capacity, or the existing one when it is larger: volumes cannot shrink, and a
// provider webhook may have enlarged it.
func (e *etcd) storageCapacity(existing *druidv1alpha1.Etcd) *resource.Quantity {
	want := defaultStorageByClass[e.values.Class]
	if e.values.StorageCapacity != nil {
		want = *e.values.StorageCapacity
	}
	if existing != nil && existing.Spec.StorageCapacity != nil && existing.Spec.StorageCapacity.Cmp(want) > 0 {
		return ptr.To(existing.Spec.StorageCapacity.DeepCopy())
	}
	return &want
}

// deltaSnapshotRetentionPeriod is Values.DeltaSnapshotRetentionPeriod, or nil when it is unset: a new Etcd
// then gets none (the sidecar's default: delta snapshots older than the latest full snapshot set are
// collected), as gardenlet writes it without one in its etcd configuration, and an existing one keeps its
// own — dropping it would have garbage collection delete the older deltas, the history a restore to an
// earlier revision needs.
func (e *etcd) deltaSnapshotRetentionPeriod() *metav1.Duration {
	if e.values.DeltaSnapshotRetentionPeriod <= 0 {
		return nil
	}
	return &metav1.Duration{Duration: e.values.DeltaSnapshotRetentionPeriod}
}

// deltaSnapshotPeriod is Values.DeltaSnapshotPeriod, else DefaultDeltaSnapshotPeriod.
func (e *etcd) deltaSnapshotPeriod() time.Duration {
	if e.values.DeltaSnapshotPeriod > 0 {
		return e.values.DeltaSnapshotPeriod
	}
	return DefaultDeltaSnapshotPeriod
}
