package hostile

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

type etcdCase = Case[*druidv1alpha1.Etcd]

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func qty(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

// Etcds change one thing of example/etcd.yaml (ExampleEtcd: three members, TLS everywhere, an S3 store).
var Etcds = []etcdCase{
	// Member count.
	{"a million members", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 1000001 }, Refused("spec.replicas")},
	{"256 members", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 256 }, Refused("spec.replicas")},
	{"negative members", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = -1 }, Refused("spec.replicas")},
	{"nine members", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 9 }, Warned("spec.replicas: 9 members; etcd recommends at most 7")},
	{"245 members as Gardener's tests keep", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 245 }, Warned("etcd recommends at most 7")},
	{"four members", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 4 }, Warned("spec.replicas: 4 members tolerate the failure of 1")},

	// Schedules.
	{"defragmentation every second", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("@every 1s") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation every minute", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("* * * * *") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation every half hour", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("*/30 * * * *") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation twice within an hour", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("0,59 3 * * *") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation every 59 minutes", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("@every 59m") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation schedule no cron", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("daily") }, Refused("spec.etcd.defragmentationSchedule")},
	{"defragmentation every third day as older Gardeners write", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("12 3 */3 * *") }, Admitted},
	{"full snapshot every second", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("@every 1s") }, Refused("spec.backup.fullSnapshotSchedule")},
	{"full snapshot every five minutes", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("*/5 * * * *") }, Refused("spec.backup.fullSnapshotSchedule")},
	{"full snapshot twice an hour", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("0,30 * * * *") }, Refused("spec.backup.fullSnapshotSchedule")},
	{"full snapshot minute out of range", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("61 * * * *") }, Refused("spec.backup.fullSnapshotSchedule")},
	{"full snapshot hourly by macro", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("@hourly") }, Refused("spec.backup.fullSnapshotSchedule")},
	{"full snapshot every 24 hours as upstream defaults", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("0 */24 * * *") }, Admitted},

	// Ports of the pod.
	{"client port is the peer port", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientPort = ptr.To[int32](2380) }, Refused("spec.etcd.clientPort")},
	{"wrapper port is the client port", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.WrapperPort = ptr.To[int32](2379) }, Refused("spec.etcd.wrapperPort")},
	{"backup port is the peer port", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Port = ptr.To[int32](2380) }, Refused("spec.backup.port")},
	{"all four ports the same", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.ClientPort, e.Spec.Etcd.ServerPort, e.Spec.Etcd.WrapperPort, e.Spec.Backup.Port = ptr.To[int32](2379), ptr.To[int32](2379), ptr.To[int32](2379), ptr.To[int32](2379)
	}, Refused("spec.etcd.serverPort")},
	{"wrapper port is the default backup port", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Port = nil
		e.Spec.Etcd.WrapperPort = ptr.To[int32](8080)
	}, Refused("spec.etcd.wrapperPort")},
	{"client port zero", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientPort = ptr.To[int32](0) }, Refused("spec.etcd.clientPort")},
	{"backup port above 65535", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Port = ptr.To[int32](70000) }, Refused("spec.backup.port")},
	{"privileged peer port", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ServerPort = ptr.To[int32](443) }, Warned("spec.etcd.serverPort: 443 is a privileged port")},

	// Durations.
	{"negative reelection period", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.LeaderElection.ReelectionPeriod = dur(-5 * time.Second) }, Refused("spec.backup.leaderElection.reelectionPeriod")},
	{"zero reelection period", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.LeaderElection.ReelectionPeriod = dur(0) }, Refused("spec.backup.leaderElection.reelectionPeriod")},
	{"hourly reelection", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.LeaderElection.ReelectionPeriod = dur(time.Hour) }, Refused("spec.backup.leaderElection.reelectionPeriod")},
	{"zero leader election timeout", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.LeaderElection.EtcdConnectionTimeout = dur(0) }, Refused("spec.backup.leaderElection.etcdConnectionTimeout")},
	{"ten-minute leader election timeout", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.LeaderElection.EtcdConnectionTimeout = dur(10 * time.Minute)
	}, Refused("spec.backup.leaderElection.etcdConnectionTimeout")},
	{"heartbeat of 1000 hours", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = dur(1000 * time.Hour) }, Refused("spec.etcd.heartbeatDuration")},
	{"heartbeat of a millisecond", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = dur(time.Millisecond) }, Refused("spec.etcd.heartbeatDuration")},
	{"heartbeat of one minute", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = dur(time.Minute) }, Refused("spec.etcd.heartbeatDuration")},
	{"zero heartbeat", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = dur(0) }, Refused("spec.etcd.heartbeatDuration")},
	{"defragmentation timeout of a second", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.EtcdDefragTimeout = dur(time.Second) }, Refused("spec.etcd.etcdDefragTimeout")},
	{"defragmentation timeout of 100 hours", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.EtcdDefragTimeout = dur(100 * time.Hour) }, Refused("spec.etcd.etcdDefragTimeout")},
	{"snapshot timeout of a nanosecond", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.EtcdSnapshotTimeout = dur(time.Nanosecond) }, Refused("spec.backup.etcdSnapshotTimeout")},
	{"snapshot timeout of 1000 hours", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.EtcdSnapshotTimeout = dur(1000 * time.Hour) }, Refused("spec.backup.etcdSnapshotTimeout")},
	{"garbage collection every second", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.GarbageCollectionPeriod = dur(time.Second) }, Refused("spec.backup.garbageCollectionPeriod")},
	{"delta snapshot every half second", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = dur(500 * time.Millisecond) }, Refused("spec.backup.deltaSnapshotPeriod")},
	{"negative delta snapshot period", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = dur(-time.Second) }, Refused("spec.backup.deltaSnapshotPeriod")},
	{"delta snapshots off", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = dur(0) }, Warned("spec.backup.deltaSnapshotPeriod: 0 turns delta snapshots off")},
	{"delta snapshot every ten seconds as the e2e suite writes", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = dur(10 * time.Second) }, Admitted},
	{"negative delta retention", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotRetentionPeriod = dur(-time.Hour) }, Refused("spec.backup.deltaSnapshotRetentionPeriod")},

	// Sizes.
	{"delta memory limit of one byte", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotMemoryLimit = qty("1") }, Refused("spec.backup.deltaSnapshotMemoryLimit")},
	{"delta memory limit of 100Gi", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotMemoryLimit = qty("100Gi") }, Refused("spec.backup.deltaSnapshotMemoryLimit")},
	{"zero delta memory limit", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotMemoryLimit = qty("0") }, Refused("spec.backup.deltaSnapshotMemoryLimit")},
	{"quota of one byte", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = qty("1") }, Refused("spec.etcd.quota")},
	{"zero quota", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = qty("0") }, Refused("spec.etcd.quota")},
	{"quota above the volume", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = qty("100Gi") }, Refused("spec.etcd.quota")},
	{"volume below the quota", func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = qty("1Gi") }, Refused("spec.storageCapacity")},
	{"zero volume", func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = qty("0") }, Refused("spec.storageCapacity")},
	{"small volume without a quota, as upstream druid's samples write", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Quota, e.Spec.StorageCapacity = nil, qty("1Gi")
	}, Warned("spec.etcd.quota: unset, etcd's default quota 8Gi exceeds spec.storageCapacity (1Gi)")},
	{"quota above etcd's suggested maximum", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Quota, e.Spec.StorageCapacity = qty("16Gi"), qty("50Gi")
	}, Warned("spec.etcd.quota: 16Gi is above etcd's suggested maximum")},
	{"zero snapshot count", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.SnapshotCount = ptr.To[int64](0) }, Refused("spec.etcd.snapshotCount")},
	{"snapshot count of a trillion", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.SnapshotCount = ptr.To[int64](1_000_000_000_000) }, Refused("spec.etcd.snapshotCount")},
	{"zero LimitBased backups", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.MaxBackupsLimitBasedGC = ptr.To[int32](0) }, Refused("spec.backup.maxBackupsLimitBasedGC")},
	{"zero compaction threshold", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.SnapshotCompaction.EventsThreshold = ptr.To[int64](0) }, Refused("spec.backup.snapshotCompaction.eventsThreshold")},
	{"full-snapshot threshold below the compaction threshold", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.SnapshotCompaction.TriggerFullSnapshotThreshold = ptr.To[int64](1000)
	}, Warned("spec.backup.snapshotCompaction.triggerFullSnapshotThreshold: 1000 is not above eventsThreshold")},

	// Names druid copies into the StatefulSet, and images.
	{"empty storage class: the cluster's default", func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("") }, Admitted},
	{"empty priority class: none", func(e *druidv1alpha1.Etcd) { e.Spec.PriorityClassName = ptr.To("") }, Admitted},
	{"empty claim template: the Etcd's name", func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("") }, Admitted},
	{"empty member name prefix", func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("") }, Refused("spec.memberNamePrefix")},
	{"storage class no object name", func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("Not_A_Class") }, Refused("spec.storageClass")},
	{"storage class of 300 characters", func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To(strings.Repeat("a", 300)) }, Refused("spec.storageClass")},
	{"claim template with a dot", func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("data.volume") }, Refused("spec.volumeClaimTemplate")},
	{"claim template upper case", func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("Data") }, Refused("spec.volumeClaimTemplate")},
	{"claim template of 64 characters", func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To(strings.Repeat("d", 64)) }, Refused("spec.volumeClaimTemplate")},
	{"priority class with a space", func(e *druidv1alpha1.Etcd) { e.Spec.PriorityClassName = ptr.To("high priority") }, Refused("spec.priorityClassName")},
	{"priority class with a leading dash", func(e *druidv1alpha1.Etcd) { e.Spec.PriorityClassName = ptr.To("-system") }, Refused("spec.priorityClassName")},
	{"etcd image with spaces", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Image = ptr.To("Not An Image") }, Refused("spec.etcd.image")},
	{"etcd image with two tags", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Image = ptr.To("registry.example.com/etcd:v1:v2") }, Refused("spec.etcd.image")},
	{"backup image upper case", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Image = ptr.To("Registry/Backup:v1") }, Refused("spec.backup.image")},
	{"backup image with a short digest", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Image = ptr.To("registry.example.com/backup@sha256:abc") }, Refused("spec.backup.image")},
	{"empty etcd image means druid's", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Image = ptr.To("") }, Admitted},
	{"backup image with tag and digest", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Image = ptr.To("europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.30.0@sha256:" + strings.Repeat("0a", 32))
	}, Admitted},
	{"member name prefix upper case", func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("Garden") }, Refused("spec.memberNamePrefix")},
	{"name too long for the client Service", func(e *druidv1alpha1.Etcd) { e.Name = strings.Repeat("e", 57) }, Refused("metadata.name")},

	// Secret references.
	{"server secret no object name", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name = "Etcd_Server" }, Refused("spec.etcd.clientUrlTls.serverTLSSecretRef.name")},
	{"CA key climbing out of the mount", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.DataKey = ptr.To("../ca.crt") }, Refused("spec.etcd.clientUrlTls.tlsCASecretRef.dataKey")},
	{"peer CA key with a slash", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.DataKey = ptr.To("certs/ca.crt") }, Refused("spec.etcd.peerUrlTls.tlsCASecretRef.dataKey")},
	{"backup client secret with an empty label", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.TLS.ClientTLSSecretRef.Name = "etcd..client" }, Refused("spec.backup.tls.clientTLSSecretRef.name")},
	{"backup secret with a space", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.SecretRef.Name = "backup secret" }, Refused("spec.backup.store.secretRef.name")},
	{"auth secret without name", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.AuthSecretRef = &corev1.SecretReference{} }, Refused("spec.etcd.authSecretRef.name")},
	{"auth secret no object name", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.AuthSecretRef = &corev1.SecretReference{Name: "Auth!"} }, Refused("spec.etcd.authSecretRef.name")},

	// The store.
	{"prefix into another shoot's backups", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "../shoot--other--b/etcd-main" }, Refused("spec.backup.store.prefix")},
	{"prefix climbing out in the middle", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "a/../../b" }, Refused("spec.backup.store.prefix")},
	{"absolute prefix", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "/etc/kubernetes" }, Refused("spec.backup.store.prefix")},
	{"prefix with a dot segment", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "./etcd-main" }, Refused("spec.backup.store.prefix")},
	{"prefix of 2000 characters", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = strings.Repeat("p", 2000) }, Refused("spec.backup.store.prefix")},
	{"prefix with a newline", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "shoot--a--b/etcd-main\n--store-prefix=x" }, Refused("spec.backup.store.prefix")},
	{"prefix with an empty segment", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "shoot--a--b//etcd-main" }, Warned("spec.backup.store.prefix: \"shoot--a--b//etcd-main\" has an empty path segment ('//' or a trailing '/'); snapshots are stored below \"shoot--a--b/etcd-main\"")},
	{"prefix with a trailing slash", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "shoot--a--b/etcd-main/" }, Warned("has an empty path segment")},
	{"Local prefix with a segment ending in ..", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
		e.Spec.Backup.Store.Prefix = "shoot--a--b../etcd-main"
	}, Refused("spec.backup.store.prefix")},
	{"Local prefix with fileblob's escape marker", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
		e.Spec.Backup.Store.Prefix = "shoot--a__0x2f__b/etcd-main"
	}, Refused("spec.backup.store.prefix")},
	{"S3 prefix with a segment ending in ..", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "shoot--a--b../etcd-main" }, Admitted},
	{"restore source that is the own prefix", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: e.Spec.Backup.Store.Prefix}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-prefix]")},
	{"restore source that is the own prefix with an empty segment", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: strings.Replace(e.Spec.Backup.Store.Prefix, "/", "//", 1) + "/"}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-prefix]")},
	{"restore source a Local store would escape", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--a--old../etcd-main"}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-prefix]")},
	{"restore source climbing out of the container", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "../other/etcd-main"}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-prefix]")},
	{"restore to a revision and a time", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--a--old/etcd-main",
			druidv1alpha1.RestoreSourceRevisionAnnotation: "10", druidv1alpha1.RestoreSourceTimeAnnotation: "2026-11-28T14:00:00Z"}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-time]")},
	{"restore to a revision that is no number", func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--a--old/etcd-main", druidv1alpha1.RestoreSourceRevisionAnnotation: "HEAD~1"}
	}, Refused("metadata.annotations[restore.gardener-etcd.io/source-revision]")},
	{"endpoint that is no URL", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.EndpointOverride = ptr.To("not a url") }, Refused("spec.backup.store.endpointOverride")},
	{"endpoint over ftp", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.EndpointOverride = ptr.To("ftp://s3.example.com") }, Refused("spec.backup.store.endpointOverride")},
	{"endpoint with credentials", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.EndpointOverride = ptr.To("https://admin:s3cr3t@s3.example.com")
	}, Outcome{RefusedAt: "spec.backup.store.endpointOverride", Absent: "s3cr3t"}},
	{"endpoint of an S3 emulator", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.EndpointOverride = ptr.To("http://10.0.0.7:7070") }, Admitted},
	{"unknown provider", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
	}, Refused("spec.backup.store.provider")},
	{"empty container", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Container = ptr.To("") }, Refused("spec.backup.store.container")},
	{"upper-case container", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Container = ptr.To("Gardener_Backups") }, Warned("spec.backup.store.container")},

	// Resources.
	{"etcd request above its limit", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
	}, Refused("spec.etcd.resources.requests[memory]")},
	{"etcd memory limit of a MiB", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}}
	}, Refused("spec.etcd.resources.limits[memory]")},
	{"negative backup cpu request", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("-1")
	}, Refused("spec.backup.resources.requests[cpu]")},
	{"compaction memory limit of 10Mi", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.SnapshotCompaction.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	}, Refused("spec.backup.snapshotCompaction.resources.limits[memory]")},
	{"resource claim", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}} }, Refused("spec.etcd.resources.claims")},
	{"resource name no name", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Resources.Requests["not a name!"] = resource.MustParse("1") }, Refused("spec.etcd.resources.requests[not a name!]")},
	{"sidecar limit at its delta buffer", func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")}}
	}, Warned("spec.backup.resources.limits[memory]: 100Mi is not above spec.backup.deltaSnapshotMemoryLimit")},

	// Scheduling constraints.
	{"spread without skew", func(e *druidv1alpha1.Etcd) { e.Spec.SchedulingConstraints.TopologySpreadConstraints[0].MaxSkew = 0 }, Refused("spec.schedulingConstraints.topologySpreadConstraints[0].maxSkew")},
	{"spread without topology key", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.TopologySpreadConstraints[0].TopologyKey = ""
	}, Refused("spec.schedulingConstraints.topologySpreadConstraints[0].topologyKey")},
	{"spread unsatisfiable sometimes", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.TopologySpreadConstraints[0].WhenUnsatisfiable = "Sometimes"
	}, Refused("spec.schedulingConstraints.topologySpreadConstraints[0].whenUnsatisfiable")},
	{"spread min domains with ScheduleAnyway", func(e *druidv1alpha1.Etcd) {
		t := &e.Spec.SchedulingConstraints.TopologySpreadConstraints[0]
		t.WhenUnsatisfiable, t.MinDomains = corev1.ScheduleAnyway, ptr.To[int32](3)
	}, Refused("spec.schedulingConstraints.topologySpreadConstraints[0].minDomains")},
	{"spread selector with an unknown operator", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.TopologySpreadConstraints[0].LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Near"}}
	}, Refused("spec.schedulingConstraints.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator")},
	{"anti-affinity without topology key", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "main"}}}},
		}}
	}, Refused("spec.schedulingConstraints.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey")},
	{"node affinity with an unknown operator", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: "Like", Values: []string{"etcd"}}}}},
		}}}
	}, Refused("spec.schedulingConstraints.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator")},
	{"node affinity matching no node", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
	}, Refused("spec.schedulingConstraints.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")},
	{"preferred anti-affinity of weight zero", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 0, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}},
		}}
	}, Refused("spec.schedulingConstraints.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight")},
	{"zone anti-affinity", func(e *druidv1alpha1.Etcd) {
		e.Spec.SchedulingConstraints.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey: "topology.kubernetes.io/zone", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/part-of": "etcd-main"}},
			}}},
		}}
	}, Admitted},

	// Metadata druid copies onto the pods and the client Service.
	{"pod annotation key no key", func(e *druidv1alpha1.Etcd) { e.Spec.Annotations["not a key!"] = "x" }, Refused("spec.annotations")},
	{"unknown traffic distribution", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientService.TrafficDistribution = ptr.To("Anywhere") }, Refused("spec.etcd.clientService.trafficDistribution")},
	{"client Service annotation key no key", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientService.Annotations["/x"] = "y" }, Refused("spec.etcd.clientService.annotations")},
	{"client Service label value with a space", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.ClientService.Labels = map[string]string{"role": "main etcd"}
	}, Refused("spec.etcd.clientService.labels")},

	// Settings shared by etcd and the sidecar.
	{"compaction retention in words", func(e *druidv1alpha1.Etcd) { e.Spec.Common.AutoCompactionRetention = ptr.To("thirty minutes") }, Refused("spec.sharedConfig.autoCompactionRetention")},
	{"compaction retention a duration in revision mode", func(e *druidv1alpha1.Etcd) {
		e.Spec.Common.AutoCompactionMode = ptr.To(druidv1alpha1.Revision)
	}, Refused("spec.sharedConfig.autoCompactionRetention")},
	{"negative compaction retention", func(e *druidv1alpha1.Etcd) { e.Spec.Common.AutoCompactionRetention = ptr.To("-1h") }, Refused("spec.sharedConfig.autoCompactionRetention")},
	{"compaction retention in hours", func(e *druidv1alpha1.Etcd) { e.Spec.Common.AutoCompactionRetention = ptr.To("8") }, Admitted},

	// Others.
	{"profiling on", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.EnableProfiling = ptr.To(true) }, Warned("spec.backup.enableProfiling")},
	{"unknown metrics level", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Metrics = ptr.To(druidv1alpha1.MetricsLevel("all")) }, Refused("spec.etcd.metrics")},
	{"peer URL over ftp", func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{{MemberName: e.Name + "-0", URLs: []string{"ftp://10.0.0.1:2380"}}}
	}, Refused("spec.etcd.additionalAdvertisePeerURLs[0].urls[0]")},

	// Joining an existing cluster (example/etcd.yaml has peer and client TLS).
	{"join eleven source members", func(e *druidv1alpha1.Etcd) {
		b := joinSource(e)
		for i := 1; i < 11; i++ {
			b.Members = append(b.Members, druidv1alpha1.BootstrapExistingMember{Name: "etcd-old-" + strconv.Itoa(i), PeerURLs: []string{"https://etcd-old-" + strconv.Itoa(i) + ":2380"}})
		}
	}, Refused("spec.etcd.bootstrapWithExistingCluster.members")},
	{"join source peer URL over http with peer TLS", func(e *druidv1alpha1.Etcd) {
		joinSource(e).Members[0].PeerURLs = []string{"http://etcd-old-0:2380"}
	}, Refused("spec.etcd.bootstrapWithExistingCluster.members[0].peerUrls[0]")},
	{"join source client endpoint not a URL", func(e *druidv1alpha1.Etcd) {
		joinSource(e).ClientEndpoints = []string{"etcd-old-client:2379"}
	}, Refused("spec.etcd.bootstrapWithExistingCluster.clientEndpoints[0]")},
	{"join source member named like a target member", func(e *druidv1alpha1.Etcd) {
		joinSource(e).Members[0].Name = e.Name + "-0"
	}, Refused("spec.etcd.bootstrapWithExistingCluster.members[0].name")},
	{"join a source cluster", func(e *druidv1alpha1.Etcd) { joinSource(e) }, Admitted},
}

// joinSource sets spec.etcd.bootstrapWithExistingCluster to a valid one-member source cluster over TLS and
// returns it for a case to break.
func joinSource(e *druidv1alpha1.Etcd) *druidv1alpha1.BootstrapWithExistingCluster {
	e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
		Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"https://etcd-old-0.etcd-old-peer." + e.Namespace + ".svc:2380"}}},
		ClientEndpoints: []string{"https://etcd-old-client." + e.Namespace + ".svc:2379"},
	}
	return e.Spec.Etcd.BootstrapWithExistingCluster
}
