package kubeletnode

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbasev1alpha1 "k8s.io/component-base/config/v1alpha1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// kubeProxyConfig makes Services work on the node in iptables mode. Conntrack sizes and timeouts are left as
// the kernel has them (zero): they are host-wide. The OOM score adjustment is 0 rather than kube-proxy's
// -999, which needs CAP_SYS_RESOURCE.
func (c Config) kubeProxyConfig() *kubeproxyv1alpha1.KubeProxyConfiguration {
	return &kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta:           metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		ClientConnection:   componentbasev1alpha1.ClientConnectionConfiguration{Kubeconfig: c.KubeProxyKubeconfig},
		HostnameOverride:   c.Name,
		BindAddress:        c.NodeIP.String(),
		HealthzBindAddress: "127.0.0.1:10256",
		MetricsBindAddress: "127.0.0.1:10249",
		Mode:               "iptables",
		ClusterCIDR:        c.ClusterCIDR.String(),
		NodePortAddresses:  []string{"primary"}, // the node's own address, not every address of its namespace
		OOMScoreAdj:        ptr.To[int32](0),
		Conntrack: kubeproxyv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore: ptr.To[int32](0), Min: ptr.To[int32](0),
			TCPEstablishedTimeout: &metav1.Duration{}, TCPCloseWaitTimeout: &metav1.Duration{},
		},
	}
}

func (c Config) writeKubeProxyConfig() (string, error) {
	path := c.path("kube-proxy-config.json")
	data, err := jsonOf(c.kubeProxyConfig())
	if err != nil {
		return "", err
	}
	return path, writeFiles(map[string][]byte{path: data})
}
