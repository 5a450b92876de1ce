package wrapper

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/soheilhy/cmux"
)

// The wrapper port answers plain HTTP and HTTPS alike. Our druid and sidecar call it in plain HTTP
// (probes, GET /phase, POST /stop); the upstream etcd-druid probes GET /readyz over HTTPS when the Etcd
// has backup TLS (docs/compatibility.md). The kubelet does not verify the certificate of an HTTPS probe,
// so the port presents a self-signed one made at startup: it proves nothing and is not meant to. Which
// protocol a connection speaks is read from its first bytes (a TLS connection opens with a handshake
// record) by cmux, the connection multiplexer etcd itself uses for its client port.

// sniffTimeout bounds how long a connection may stay silent before its protocol is known.
const sniffTimeout = 10 * time.Second

// servePlainAndTLS serves srv on l, plain and TLS (with cert) by each connection's first bytes (cmux),
// until l is closed; srv.Shutdown ends both. Each connection is sniffed on its own, so a client that
// sends nothing holds up no other.
func servePlainAndTLS(srv *http.Server, l net.Listener, cert tls.Certificate) {
	m := cmux.New(l)
	m.SetReadTimeout(sniffTimeout)
	secure := tls.NewListener(m.Match(cmux.TLS()), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	plain := m.Match(cmux.Any())
	go func() { _ = srv.Serve(secure) }()
	go func() { _ = srv.Serve(plain) }()
	go func() { _ = m.Serve() }()
}

// selfSignedCertificate makes the wrapper port's certificate: ECDSA P-256, valid for ten years from now.
func selfSignedCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "etcd-wrapper"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
