package etcdpod

import "time"

// Paths inside the etcd pod. The configuration template names the TLS files at these paths and the
// StatefulSet mounts the secrets there.
const (
	// DataVolumeMountPath is where the member's PVC is mounted in both containers; the wrapper keeps its
	// marker files there.
	DataVolumeMountPath = "/var/etcd/data"
	// DataDir is etcd's data directory inside the data volume.
	DataDir = DataVolumeMountPath + "/new.etcd"
	// TmpMountPath is a writable emptyDir in both containers, whose root file systems are read-only.
	TmpMountPath = "/tmp"
	// ConfigMountPath is the directory the ConfigMap is mounted at.
	ConfigMountPath = "/var/etcd/config"
	// ConfigFileName is the ConfigMap key of the etcd configuration template, also its file name when mounted.
	ConfigFileName = "etcd.conf.yaml"
	// ConfigFilePath is where the sidecar reads the template unless EnvConfigPath says otherwise.
	ConfigFilePath = ConfigMountPath + "/" + ConfigFileName

	// ClientCAMountPath holds the CA that verifies etcd's clients (spec.etcd.clientUrlTls.tlsCASecretRef).
	ClientCAMountPath = "/var/etcd/ssl/ca"
	// ClientServerTLSMountPath holds etcd's client-facing server certificate.
	ClientServerTLSMountPath = "/var/etcd/ssl/server"
	// ClientTLSMountPath holds the client certificate the sidecar and the wrapper use to talk to etcd.
	ClientTLSMountPath = "/var/etcd/ssl/client"
	// PeerCAMountPath holds the CA that verifies peers (spec.etcd.peerUrlTls.tlsCASecretRef).
	PeerCAMountPath = "/var/etcd/ssl/peer/ca"
	// PeerServerTLSMountPath holds the member's peer certificate.
	PeerServerTLSMountPath = "/var/etcd/ssl/peer/server"
	// BackupCAMountPath holds the CA of the sidecar's HTTPS server (spec.backup.tls.tlsCASecretRef).
	BackupCAMountPath = "/var/etcdbr/ssl/ca"
	// BackupServerTLSMountPath holds the sidecar's HTTPS server certificate.
	BackupServerTLSMountPath = "/var/etcdbr/ssl/server"
	// BackupClientTLSMountPath holds the client certificate the wrapper uses to call the sidecar.
	BackupClientTLSMountPath = "/var/etcdbr/ssl/client"
	// TLSCertKey and TLSKeyKey are the keys of server and client certificate secrets, so also the file
	// names in their mount directories.
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"

	// BackupSecretMountPath is where the backup secret is mounted, one file per key; the provider's
	// credentials variable points there.
	BackupSecretMountPath = "/var/etcd-backup"
	// LocalHome is HOME of uid 65532 in the images; a Local store's directory is mounted at
	// LocalHome/<container>, where etcdbrctl looks for it.
	LocalHome = "/home/nonroot"
)

// DefaultReelectionPeriod is how often the sidecar asks its member whether it leads when druid passes no
// --reelection-period (the connection timeout of that request defaults to the period too). Druid compares
// an Etcd's spec.backup.leaderElection with it, so that the default value renders no flag.
const DefaultReelectionPeriod = 5 * time.Second

// Paths of the old etcd servers in our etcd-wrapper image (pkg/imagebuild puts them there, druid passes them
// as --step-etcd-3.5-binary and --step-etcd-3.6-binary): the wrapper steps data that etcd 3.4 or 3.5 wrote
// through them before etcd 3.7 opens it. Ours only; Gardener's wrapper image has neither binary nor flag.
const (
	StepEtcd35BinaryPath = "/usr/local/bin/etcd-3.5"
	StepEtcd36BinaryPath = "/usr/local/bin/etcd-3.6"
)
