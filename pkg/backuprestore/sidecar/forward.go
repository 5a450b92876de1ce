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
// too) it verifies the leader's certificate with --server-cacert, else with the system roots, and
// authenticates with this sidecar's own certificate (--server-cert): the leader serves snapshot requests
// from outside its pod only to clients of the backup-restore CA, and the server certificates of that CA
// are issued for client authentication too.
func (o *Options) forwardClient() (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.ServerCert != "" {
		cert, err := tls.LoadX509KeyPair(o.ServerCert, o.ServerKey)
		if err != nil {
			return nil, fmt.Errorf("--server-cert as the client certificate for forwarding: %w", err)
		}
		transport.TLSClientConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if o.ServerCACert != "" {
		pem, err := os.ReadFile(o.ServerCACert)
		if err != nil {
			return nil, fmt.Errorf("--server-cacert: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--server-cacert: no certificate in %s", o.ServerCACert)
		}
		if transport.TLSClientConfig == nil {
			transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		transport.TLSClientConfig.RootCAs = roots
	}
	return &http.Client{Transport: transport, Timeout: forwardTimeout}, nil
}

// forwardTimeout bounds a forwarded snapshot request: a full snapshot of a large database takes minutes.
const forwardTimeout = 10 * time.Minute
