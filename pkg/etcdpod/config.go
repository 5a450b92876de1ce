package etcdpod

// ConfigTemplate is the etcd configuration template druid writes into the ConfigMap under ConfigFileName:
// etcd's YAML config keys, plus per-member URL maps the sidecar resolves for its own member
// (as upstream etcd-druid renders it). Druid renders it from this struct; the sidecar reads the file
// as a generic map (so that keys it does not know reach etcd unchanged) and finds the keys it resolves
// by the Key constants below, which a test keeps equal to these json tags.
type ConfigTemplate struct {
	// Name is a placeholder (the Etcd name): the sidecar replaces it with its member's name.
	Name          string `json:"name"`
	DataDir       string `json:"data-dir"`
	Metrics       string `json:"metrics"`
	SnapshotCount int64  `json:"snapshot-count"`
	// QuotaBackendBytes is spec.etcd.quota in bytes.
	QuotaBackendBytes int64 `json:"quota-backend-bytes"`
	// HeartbeatInterval and ElectionTimeout (milliseconds) are etcd's defaults, written out so that every
	// member of a cluster is guaranteed to agree on them.
	HeartbeatInterval int    `json:"heartbeat-interval"`
	ElectionTimeout   int    `json:"election-timeout"`
	ListenClientURLs  string `json:"listen-client-urls"`
	ListenPeerURLs    string `json:"listen-peer-urls"`
	// AdvertiseClientURLs and InitialAdvertisePeerURLs map each member's pod name to its URLs.
	AdvertiseClientURLs      map[string][]string `json:"advertise-client-urls"`
	InitialAdvertisePeerURLs map[string][]string `json:"initial-advertise-peer-urls"`
	// InitialCluster lists every member as `<pod>=<peer URL>`, one entry per URL (`<pod>=<url1>,<pod>=<url2>`
	// when a member advertises several), keyed by the POD name as upstream druid renders it, even with a
	// memberNamePrefix; its size (distinct names) tells the sidecar single- vs multi-node. ConfigMaps of
	// earlier versions of this druid carry the member names instead (`<prefix>-<pod>=<url>`, no
	// MemberNamePrefix); the sidecar reads both.
	InitialCluster          string `json:"initial-cluster"`
	InitialClusterToken     string `json:"initial-cluster-token"`
	InitialClusterState     string `json:"initial-cluster-state"`
	AutoCompactionMode      string `json:"auto-compaction-mode"`
	AutoCompactionRetention string `json:"auto-compaction-retention"`
	EnableGRPCGateway       bool   `json:"enable-grpc-gateway"`
	// BackendBboltFreelistType is spec.etcd.backendBboltFreelistType (`map` or `array`); omitted when unset,
	// which leaves etcd's default.
	BackendBboltFreelistType string          `json:"backend-bbolt-freelist-type,omitempty"`
	ClientTransportSecurity  *SecurityConfig `json:"client-transport-security,omitempty"`
	PeerTransportSecurity    *SecurityConfig `json:"peer-transport-security,omitempty"`
	// MemberNamePrefix is spec.memberNamePrefix, omitted when unset or empty: the etcd member of pod p is
	// then named `<prefix>-<p>` (its member lease too), while initial-cluster and the URL maps stay keyed by
	// pod name. Not an etcd option: the sidecar applies it and does not pass it on.
	MemberNamePrefix string `json:"member-name-prefix,omitempty"`
}

// SecurityConfig is etcd's `*-transport-security` block.
type SecurityConfig struct {
	CertFile                  string `json:"cert-file"`
	KeyFile                   string `json:"key-file"`
	ClientCertAuth            bool   `json:"client-cert-auth"`
	TrustedCAFile             string `json:"trusted-ca-file"`
	AutoTLS                   bool   `json:"auto-tls"`
	SkipClientSANVerification bool   `json:"skip-client-san-verification,omitempty"`
}

// Keys of ConfigTemplate that the sidecar resolves per member (its json tags).
const (
	KeyName                     = "name"
	KeyDataDir                  = "data-dir"
	KeyInitialCluster           = "initial-cluster"
	KeyInitialClusterState      = "initial-cluster-state"
	KeyInitialAdvertisePeerURLs = "initial-advertise-peer-urls"
	KeyAdvertiseClientURLs      = "advertise-client-urls"
	KeyListenPeerURLs           = "listen-peer-urls"
	KeyListenClientURLs         = "listen-client-urls"
	KeyClientTransportSecurity  = "client-transport-security"
	KeyPeerTransportSecurity    = "peer-transport-security"
	KeyMemberNamePrefix         = "member-name-prefix"
)
