package configmap

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// The fixed values of the template.
const (
	initialClusterToken = "etcd-cluster"
	initialClusterState = "new"
	heartbeatIntervalMs = 100
	electionTimeoutMs   = 1000
)

// NewTemplate builds the template for a defaulted Etcd with one member per spec.replicas (none when
// hibernated: initial-cluster is then empty and the maps are empty), as upstream etcd-druid renders it:
// initial-cluster and the URL maps are keyed by pod name, also with spec.memberNamePrefix, which goes into
// `member-name-prefix` (the sidecar names the member `<prefix>-<pod>`). The URLs of the
// spec.etcd.additionalAdvertisePeerURLs entry whose memberName is the pod name follow the pod's peer Service
// URL in initial-advertise-peer-urls and in initial-cluster, one `<pod>=<url>` entry per URL.
func NewTemplate(etcd *druidv1alpha1.Etcd) *etcdpod.ConfigTemplate {
	spec := etcd.Spec.Etcd
	clientScheme := etcdpod.Scheme(spec.ClientUrlTLS != nil)
	peerScheme := etcdpod.Scheme(spec.PeerUrlTLS != nil)
	t := &etcdpod.ConfigTemplate{
		Name:                     etcd.Name,
		DataDir:                  etcdpod.DataDir,
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
		AutoCompactionMode:       string(*etcd.Spec.Common.AutoCompactionMode),
		AutoCompactionRetention:  *etcd.Spec.Common.AutoCompactionRetention,
		EnableGRPCGateway:        spec.EnableGRPCGateway != nil && *spec.EnableGRPCGateway,
	}
	if spec.BackendBboltFreelistType != nil {
		t.BackendBboltFreelistType = string(*spec.BackendBboltFreelistType)
	}
	if p := etcd.Spec.MemberNamePrefix; p != nil {
		t.MemberNamePrefix = *p
	}
	var members []string
	for i := 0; i < int(etcd.Spec.Replicas); i++ {
		pod := druidv1alpha1.PodName(etcd, i)
		host := fmt.Sprintf("%s.%s.%s.svc", pod, druidv1alpha1.PeerServiceName(etcd), etcd.Namespace)
		peerURLs := append([]string{fmt.Sprintf("%s://%s:%d", peerScheme, host, *spec.ServerPort)}, additionalPeerURLs(etcd, pod)...)
		t.InitialAdvertisePeerURLs[pod] = peerURLs
		t.AdvertiseClientURLs[pod] = []string{fmt.Sprintf("%s://%s:%d", clientScheme, host, *spec.ClientPort)}
		for _, u := range peerURLs {
			members = append(members, pod+"="+u)
		}
	}
	if etcd.Spec.Replicas > 0 {
		members = append(members, existingClusterMembers(etcd)...)
	}
	t.InitialCluster = strings.Join(members, ",")
	if tls := spec.ClientUrlTLS; tls != nil {
		t.ClientTransportSecurity = &etcdpod.SecurityConfig{
			CertFile:       etcdpod.ClientServerTLSMountPath + "/" + etcdpod.TLSCertKey,
			KeyFile:        etcdpod.ClientServerTLSMountPath + "/" + etcdpod.TLSKeyKey,
			ClientCertAuth: true,
			TrustedCAFile:  etcdpod.ClientCAMountPath + "/" + CAFileName(tls.TLSCASecretRef),
		}
	}
	if tls := spec.PeerUrlTLS; tls != nil {
		t.PeerTransportSecurity = &etcdpod.SecurityConfig{
			CertFile:                  etcdpod.PeerServerTLSMountPath + "/" + etcdpod.TLSCertKey,
			KeyFile:                   etcdpod.PeerServerTLSMountPath + "/" + etcdpod.TLSKeyKey,
			ClientCertAuth:            true,
			TrustedCAFile:             etcdpod.PeerCAMountPath + "/" + CAFileName(tls.TLSCASecretRef),
			SkipClientSANVerification: tls.SkipClientSANVerification != nil && *tls.SkipClientSANVerification,
		}
	}
	return t
}

// additionalPeerURLs are the URLs of the first spec.etcd.additionalAdvertisePeerURLs entry for pod. The
// upstream druid matches the entry's memberName against the pod name, not the prefixed member name.
func additionalPeerURLs(etcd *druidv1alpha1.Etcd, pod string) []string {
	for _, m := range etcd.Spec.Etcd.AdditionalAdvertisePeerURLs {
		if m.MemberName == pod {
			return m.URLs
		}
	}
	return nil
}

// existingClusterMembers are the `<name>=<peer URL>` entries of spec.etcd.bootstrapWithExistingCluster's
// source members, as upstream etcd-druid appends them to initial-cluster after the Etcd's own members:
// the members then join the source cluster instead of bootstrapping one. They are named as the source
// cluster names them (no pod, no member-name-prefix), and have no entry in the URL maps, which is how the
// sidecar tells them from the Etcd's own members (memberconfig.Template.ExistingCluster).
func existingClusterMembers(etcd *druidv1alpha1.Etcd) []string {
	b := etcd.Spec.Etcd.BootstrapWithExistingCluster
	if b == nil {
		return nil
	}
	var entries []string
	for _, m := range b.Members {
		for _, u := range m.PeerURLs {
			entries = append(entries, m.Name+"="+u)
		}
	}
	return entries
}

// CAFileName is the file name of a CA bundle in its mounted secret: the reference's dataKey, ca.crt by
// default. The StatefulSet projects the CA secret's key to this name.
func CAFileName(ref druidv1alpha1.SecretReference) string {
	if ref.DataKey != nil && *ref.DataKey != "" {
		return *ref.DataKey
	}
	return druidv1alpha1.DefaultCADataKey
}

// Render returns the ConfigMap data for a defaulted Etcd: the template under etcdpod.ConfigFileName. Equal Etcd specs
// give byte-identical data, which keeps the StatefulSet's checksum annotation stable.
func Render(etcd *druidv1alpha1.Etcd) (map[string]string, error) {
	out, err := yaml.Marshal(NewTemplate(etcd))
	if err != nil {
		return nil, fmt.Errorf("rendering the etcd configuration template: %w", err)
	}
	return map[string]string{etcdpod.ConfigFileName: string(out)}, nil
}
