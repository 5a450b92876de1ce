package s3server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// selfSignedCert writes a certificate for 127.0.0.1 that is its own CA (cert.pem, key.pem in dir) and
// returns the certificate PEM, which clients trust as their CA (the backup secret's trustedCaCert).
func selfSignedCert(dir string) (certFile, keyFile string, certPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, fmt.Errorf("generating TLS key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "s3server test CA"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", nil, fmt.Errorf("creating TLS certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", nil, fmt.Errorf("encoding TLS key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", nil, err
	}
	return certFile, keyFile, certPEM, nil
}

// newTransport is the one transport of all the server's clients, trusting its own certificate when it
// serves TLS. It is the server's own (not http.DefaultTransport) so that Stop can close its idle
// connections.
func (s *Server) newTransport() *http.Transport {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if len(s.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.CACertPEM)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return transport
}

// httpClient is a client of the server on its transport; timeout 0 means none.
func (s *Server) httpClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: s.transport}
}
