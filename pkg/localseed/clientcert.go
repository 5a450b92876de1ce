package localseed

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
)

// clientKubeconfig issues a client certificate for user (CN) in groups (O) and writes a kubeconfig with it
// to <pki>/<file>.kubeconfig: the kubelets authenticate as system:node:<node> in system:nodes (which the
// Node authorizer and NodeRestriction confine to their own node), kube-proxy as system:kube-proxy.
func (p *pki) clientKubeconfig(file, server, user string, groups ...string) (string, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	certPath, keyPath := filepath.Join(p.dir, file+".crt"), filepath.Join(p.dir, file+".key")
	certPEM, err := p.issue(tmpl, p.ca, p.caSigner, certPath, keyPath)
	if err != nil {
		return "", err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.dir, file+".kubeconfig")
	return path, writeKubeconfigWith(path, server, p.caPEM, certPEM, keyPEM)
}
