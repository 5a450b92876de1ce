package configmap

// Paths inside the etcd pod. The configuration template names the TLS files at these paths, and the
// StatefulSet mounts the secrets there, so both packages take them from here.
const (
	// DataVolumeMountPath is where the member's PVC is mounted in both containers.
	DataVolumeMountPath = "/var/etcd/data"
	// DataDir is etcd's data directory inside the data volume.
	DataDir = DataVolumeMountPath + "/new.etcd"
	// ConfigMountPath is the directory the ConfigMap is mounted at; the sidecar reads ConfigMountPath/ConfigKey.
	ConfigMountPath = "/var/etcd/config"
	// ConfigKey is the ConfigMap key of the etcd configuration template, also its file name when mounted.
	ConfigKey = "etcd.conf.yaml"

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

	// TLSCertKey and TLSKeyKey are the keys of server and client certificate secrets (druid-api.md).
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)
