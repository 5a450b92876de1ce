package etcdpod

// Container names of the etcd pod.
const (
	// ContainerEtcd runs the etcd wrapper, which starts etcd with the configuration the sidecar serves.
	ContainerEtcd = "etcd"
	// ContainerBackupRestore runs `etcdbrctl server`.
	ContainerBackupRestore = "backup-restore"
)

// Port names of the containers.
const (
	PortNameClient        = "client"
	PortNameServer        = "server"
	PortNameWrapper       = "wrapper"
	PortNameBackupRestore = "backuprestore"
)

// Default ports: etcd's client and peer ports, the wrapper's /readyz and /stop port and the sidecar's
// HTTP(S) port. An Etcd may choose others; these are the defaults of the Etcd API and of the binaries'
// flags.
const (
	DefaultClientPort  = int32(2379)
	DefaultServerPort  = int32(2380)
	DefaultWrapperPort = int32(9095)
	DefaultBackupPort  = int32(8080)
)

// Environment variables of the pod.
const (
	// EnvPodName and EnvPodNamespace are set from the downward API in both containers: the sidecar resolves
	// its member entry of the configuration template and its member lease by them.
	EnvPodName      = "POD_NAME"
	EnvPodNamespace = "POD_NAMESPACE"
	// EnvHome is set to LocalHome in containers that use a Local store, whose root is $HOME/<container>.
	EnvHome = "HOME"
	// EnvConfigPath overrides the sidecar's template path ConfigFilePath (tests and local runs outside a
	// pod); druid does not set it.
	EnvConfigPath = "ETCD_CONF"
)

// localHostSuffix makes LocalHostName.
const localHostSuffix = "-local"

// LocalHostName is the name under which each container of an etcd pod reaches the other one (a hostAlias
// to 127.0.0.1), for the Etcd named etcdName; the etcd server certificate must carry it.
func LocalHostName(etcdName string) string { return etcdName + localHostSuffix }

// Scheme is the URL scheme of a listener: "https" with TLS, "http" without.
func Scheme(tlsEnabled bool) string {
	if tlsEnabled {
		return "https"
	}
	return "http"
}

// SnapshotNameAnnotation is set on the snapshot leases by the sidecar (and the compaction Job) with the
// store object's base name of the snapshot whose revision the lease's holderIdentity records, e.g.
// `Full-00000000-00001234-1700000000.gz`; druid shows it as status.lastFullSnapshot.name and
// status.lastDeltaSnapshot.name. Ours, an optional addition to the wire: upstream sidecars do not write it,
// and a renewal that stores no new snapshot (a quiet delta period) leaves it as it is.
const SnapshotNameAnnotation = "snapshot.etcd.gardener.cloud/name"
