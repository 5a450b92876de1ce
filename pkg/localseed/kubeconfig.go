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
	return writeKubeconfigWith(path, server, p.caPEM, p.adminCertPEM, p.adminKeyPEM)
}

// writeKubeconfigWith writes a kubeconfig for the client certificate and key.
func writeKubeconfigWith(path, server string, caPEM, certPEM, keyPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
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
