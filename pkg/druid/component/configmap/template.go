package configmap

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Template is the etcd configuration template in etcd's YAML config keys, plus the per-member URL maps the
// sidecar resolves for its own member (shared/reference/druid-components.md). It is a struct, not a map,
// so that the keys are spelled once and the rendering is deterministic.
type Template struct {
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
	// InitialCluster lists every member `<member>=<peer URL>`; its size tells the sidecar single- vs multi-node.
	InitialCluster          string          `json:"initial-cluster"`
	InitialClusterToken     string          `json:"initial-cluster-token"`
	InitialClusterState     string          `json:"initial-cluster-state"`
	AutoCompactionMode      string          `json:"auto-compaction-mode"`
	AutoCompactionRetention string          `json:"auto-compaction-retention"`
	EnableGRPCGateway       bool            `json:"enable-grpc-gateway"`
	ClientTransportSecurity *SecurityConfig `json:"client-transport-security,omitempty"`
	PeerTransportSecurity   *SecurityConfig `json:"peer-transport-security,omitempty"`
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

// The fixed values of the template.
const (
	initialClusterToken = "etcd-cluster"
	initialClusterState = "new"
	heartbeatIntervalMs = 100
	electionTimeoutMs   = 1000
)

// Scheme returns "https" when tls is set and "http" otherwise.
func Scheme(tlsEnabled bool) string {
	if tlsEnabled {
		return "https"
	}
	return "http"
}

// NewTemplate builds the template for a defaulted Etcd with one member per spec.replicas (none when
// hibernated: initial-cluster is then empty and the maps are empty).
func NewTemplate(etcd *druidv1alpha1.Etcd) *Template {
	spec := etcd.Spec.Etcd
	clientScheme := Scheme(spec.ClientUrlTLS != nil)
	peerScheme := Scheme(spec.PeerUrlTLS != nil)
	t := &Template{
		Name:                     etcd.Name,
		DataDir:                  DataDir,
		Metrics:                  string(*spec.Metrics),
		SnapshotCount:            *spec.SnapshotCount,
		QuotaBackendBytes:        spec.Quota.Value(),
		HeartbeatInterval:        heartbeatIntervalMs,
		ElectionTimeout:          electionTimeoutMs,
		ListenClientURLs:         fmt.Sprintf("%s://0.0.0.0:%d", clientScheme, *spec.ClientPort),
		ListenPeerURLs:           fmt.Sprintf("%s://0.0.0.0:%d", peerScheme, *spec.ServerPort),
		AdvertiseClientURLs:      map[string][]string{},
		InitialAdvertisePeerURLs: map[string][]string{},
		InitialClusterToken:      initialClusterToken,
		InitialClusterState:      initialClusterState,
		AutoCompactionMode:       string(*etcd.Spec.SharedConfig.AutoCompactionMode),
		AutoCompactionRetention:  *etcd.Spec.SharedConfig.AutoCompactionRetention,
		EnableGRPCGateway:        spec.EnableGRPCGateway != nil && *spec.EnableGRPCGateway,
	}
	members := make([]string, 0, etcd.Spec.Replicas)
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		pod := etcd.PodName(i)
		host := fmt.Sprintf("%s.%s.%s.svc", pod, etcd.PeerServiceName(), etcd.Namespace)
		peerURL := fmt.Sprintf("%s://%s:%d", peerScheme, host, *spec.ServerPort)
		t.InitialAdvertisePeerURLs[pod] = []string{peerURL}
		t.AdvertiseClientURLs[pod] = []string{fmt.Sprintf("%s://%s:%d", clientScheme, host, *spec.ClientPort)}
		members = append(members, etcd.MemberLeaseName(i)+"="+peerURL)
	}
	t.InitialCluster = strings.Join(members, ",")
	if tls := spec.ClientUrlTLS; tls != nil {
		t.ClientTransportSecurity = &SecurityConfig{
			CertFile:       ClientServerTLSMountPath + "/" + TLSCertKey,
			KeyFile:        ClientServerTLSMountPath + "/" + TLSKeyKey,
			ClientCertAuth: true,
			TrustedCAFile:  ClientCAMountPath + "/" + CAFileName(tls.TLSCASecretRef),
		}
	}
	if tls := spec.PeerUrlTLS; tls != nil {
		t.PeerTransportSecurity = &SecurityConfig{
			CertFile:                  PeerServerTLSMountPath + "/" + TLSCertKey,
			KeyFile:                   PeerServerTLSMountPath + "/" + TLSKeyKey,
			ClientCertAuth:            true,
			TrustedCAFile:             PeerCAMountPath + "/" + CAFileName(tls.TLSCASecretRef),
			SkipClientSANVerification: tls.SkipClientSANVerification != nil && *tls.SkipClientSANVerification,
		}
	}
	return t
}

// CAFileName is the file name of a CA bundle in its mounted secret: the reference's dataKey, ca.crt by
// default. The StatefulSet projects the CA secret's key to this name.
func CAFileName(ref druidv1alpha1.SecretReference) string {
	if ref.DataKey != nil && *ref.DataKey != "" {
		return *ref.DataKey
	}
	return druidv1alpha1.DefaultCADataKey
}

// Render returns the ConfigMap data for a defaulted Etcd: the template under ConfigKey. Equal Etcd specs
// give byte-identical data, which keeps the StatefulSet's checksum annotation stable.
func Render(etcd *druidv1alpha1.Etcd) (map[string]string, error) {
	out, err := yaml.Marshal(NewTemplate(etcd))
	if err != nil {
		return nil, fmt.Errorf("rendering the etcd configuration template: %w", err)
	}
	return map[string]string{ConfigKey: string(out)}, nil
}
