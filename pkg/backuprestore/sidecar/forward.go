package sidecar

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"
)

// forwardClient reaches the backup leader's sidecar: over https (when this API serves TLS, the leader's does
// too) it verifies the leader's certificate with --server-cacert, else with the system roots.
func (o *Options) forwardClient() (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.ServerCACert != "" {
		pem, err := os.ReadFile(o.ServerCACert)
		if err != nil {
			return nil, fmt.Errorf("--server-cacert: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--server-cacert: no certificate in %s", o.ServerCACert)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: transport, Timeout: forwardTimeout}, nil
}

// forwardTimeout bounds a forwarded snapshot request: a full snapshot of a large database takes minutes.
const forwardTimeout = 10 * time.Minute
