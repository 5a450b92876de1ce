package wrapper

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"time"
)

// The wrapper port answers plain HTTP and HTTPS alike. Our druid and sidecar call it in plain HTTP
// (probes, GET /phase, POST /stop); the deployed etcd-druid probes GET /readyz over HTTPS when the Etcd
// has backup TLS (docs/compatibility.md). The kubelet does not verify the certificate of an HTTPS probe,
// so the port presents a self-signed one made at startup: it proves nothing and is not meant to. Which
// protocol a connection speaks is read from its first byte: a TLS connection starts with a handshake
// record (content type 22).

const tlsHandshakeRecord = 0x16

// plainOrTLS wraps l so that each accepted connection serves TLS with cert when it opens with a TLS
// handshake, and plain otherwise.
func plainOrTLS(l net.Listener, cert tls.Certificate) net.Listener {
	return &plainOrTLSListener{Listener: l, config: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
}

type plainOrTLSListener struct {
	net.Listener
	config *tls.Config
}

// Accept does not read: a client that sends nothing must not hold up the others. The connection decides
// on its first Read or Write.
func (l *plainOrTLSListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffedConn{Conn: c, config: l.config}, nil
}

// sniffedConn is plain or TLS, as its first byte says.
type sniffedConn struct {
	net.Conn
	config *tls.Config
	once   sync.Once
	// inner serves Read, Write and Close once decided: a *tls.Conn, or the plain connection with the
	// peeked byte still to be read.
	inner net.Conn
}

func (c *sniffedConn) decide() {
	c.once.Do(func() {
		br := bufio.NewReaderSize(c.Conn, 16)
		buffered := &bufferedConn{Conn: c.Conn, r: br}
		c.inner = buffered
		if b, err := br.Peek(1); err == nil && b[0] == tlsHandshakeRecord {
			c.inner = tls.Server(buffered, c.config)
		}
	})
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	c.decide()
	return c.inner.Read(p)
}

func (c *sniffedConn) Write(p []byte) (int, error) {
	c.decide()
	return c.inner.Write(p)
}

// Close closes the connection as decided (TLS sends its close notification); one never read from is
// closed as it is.
func (c *sniffedConn) Close() error {
	c.once.Do(func() { c.inner = c.Conn })
	return c.inner.Close()
}

// bufferedConn reads through r, which holds what was peeked.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

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
