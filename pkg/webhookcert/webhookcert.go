// Package webhookcert issues the serving certificate of a webhook Service: a private CA, whose certificate
// the webhook configuration carries as caBundle, and a server certificate for the Service's DNS names. The
// seed bootstrap and the tests use it, so that what the apiserver verifies in a test is what a seed gets.
package webhookcert

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
	"os"
	"path/filepath"
	"time"
)

// Secret data keys, named as controller-runtime's webhook server reads them from its cert dir.
const (
	DataKeyCertificate = "tls.crt"
	DataKeyPrivateKey  = "tls.key"
	DataKeyCA          = "ca.crt"
	// DataKeyPreviousCAs holds the CAs a renewal replaced, still trusted until they expire (Renewed).
	DataKeyPreviousCAs = "previous-ca.crt"
)

// DefaultValidity is how long a generated CA and serving certificate are valid.
const DefaultValidity = 5 * 365 * 24 * time.Hour

// Bundle is a CA and a serving certificate signed by it, all PEM encoded, and the CAs earlier renewals
// replaced.
type Bundle struct {
	CACert []byte
	Cert   []byte
	Key    []byte
	// PreviousCACerts are the CAs of earlier serving certificates, kept in CABundle until they expire: a
	// webhook server may still serve a certificate of one (the kubelet refreshes a mounted Secret a while
	// after it changed).
	PreviousCACerts []byte
}

// CABundle is what a webhook configuration trusts: the current CA and every previous one that has not
// expired at now.
func (b *Bundle) CABundle(now time.Time) []byte {
	return append(append([]byte{}, b.CACert...), unexpired(b.PreviousCACerts, now)...)
}

// Renewed returns next (a freshly generated bundle) that keeps trusting b's CAs until they expire. A
// renewal thus overlaps: a caBundle written from the result holds the old and the new CA, so that both the
// old serving certificate (still served until the server reloads) and the new one verify. The caller
// publishes that caBundle before it hands the new certificate to the server.
func (b *Bundle) Renewed(next *Bundle, now time.Time) *Bundle {
	renewed := *next
	renewed.PreviousCACerts = unexpired(append(append([]byte{}, b.CACert...), b.PreviousCACerts...), now)
	return &renewed
}

// Pruned returns b without the previous CAs that expired at now (b itself when none did).
func (b *Bundle) Pruned(now time.Time) *Bundle {
	kept := unexpired(b.PreviousCACerts, now)
	if string(kept) == string(b.PreviousCACerts) {
		return b
	}
	pruned := *b
	pruned.PreviousCACerts = kept
	return &pruned
}

// unexpired returns the PEM certificates of pemCerts that are valid at now, dropping anything else (expired
// certificates, undecodable blocks).
func unexpired(pemCerts []byte, now time.Time) []byte {
	var out []byte
	for rest := pemCerts; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil || now.After(cert.NotAfter) {
			continue
		}
		out = append(out, pem.EncodeToMemory(block)...)
	}
}

// DNSNames are the names a client may use to reach Service name in namespace.
func DNSNames(name, namespace string) []string {
	return []string{
		name,
		name + "." + namespace,
		name + "." + namespace + ".svc",
		name + "." + namespace + ".svc.cluster.local",
	}
}

// Generate issues a new CA and a serving certificate for dnsNames and ips, valid from now for validity.
func Generate(dnsNames []string, ips []net.IP, now time.Time, validity time.Duration) (*Bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "webhook-ca"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the webhook CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cn := "webhook"
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Bundle{
		CACert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// Valid tells whether the bundle's serving certificate chains to its CA, covers dnsNames and stays valid
// for at least minRemaining after now; the seed bootstrap keeps such a bundle instead of rotating it on
// every run.
func (b *Bundle) Valid(dnsNames []string, now time.Time, minRemaining time.Duration) bool {
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CACert) {
		return false
	}
	for _, name := range dnsNames {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now.Add(minRemaining)}); err != nil {
			return false
		}
	}
	return true
}

// Data is the bundle as Secret data (the previous CAs only when there are any).
func (b *Bundle) Data() map[string][]byte {
	data := map[string][]byte{DataKeyCA: b.CACert, DataKeyCertificate: b.Cert, DataKeyPrivateKey: b.Key}
	if len(b.PreviousCACerts) > 0 {
		data[DataKeyPreviousCAs] = b.PreviousCACerts
	}
	return data
}

// FromData reads a bundle from Secret data; missing keys yield empty fields (and an invalid bundle).
func FromData(data map[string][]byte) *Bundle {
	return &Bundle{CACert: data[DataKeyCA], Cert: data[DataKeyCertificate], Key: data[DataKeyPrivateKey], PreviousCACerts: data[DataKeyPreviousCAs]}
}

// WriteDir writes tls.crt and tls.key (and ca.crt) into dir, the layout a webhook server's cert dir has.
func (b *Bundle) WriteDir(dir string) error {
	for name, content := range map[string][]byte{DataKeyCA: b.CACert, DataKeyCertificate: b.Cert, DataKeyPrivateKey: b.Key} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
