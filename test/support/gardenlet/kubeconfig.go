package gardenlet

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig for cfg (host, CA and bearer token, as DruidIdentity returns) to path:
// the druid command reads its identity from --kubeconfig, as a pod reads its mounted token.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["apiserver"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kubeconfig.AuthInfos[DruidServiceAccount] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kubeconfig.Contexts[DruidServiceAccount] = &clientcmdapi.Context{Cluster: "apiserver", AuthInfo: DruidServiceAccount}
	kubeconfig.CurrentContext = DruidServiceAccount
	return clientcmd.WriteToFile(*kubeconfig, path)
}
