package localseed

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the kubeconfig context of the local seed.
const contextName = "gardener-etcd-local"

// writeKubeconfig writes an admin kubeconfig with embedded credentials to path, so that it keeps working
// when copied elsewhere.
func writeKubeconfig(path, server string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminCertPEM, ClientKeyData: p.adminKeyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig is the admin client configuration the seed itself uses.
func restConfig(server string, p *pki) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: p.caPEM, CertData: p.adminCertPEM, KeyData: p.adminKeyPEM,
		},
		QPS: 100, Burst: 200,
	}
}
