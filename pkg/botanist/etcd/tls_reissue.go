package etcd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"time"
)

// SigningCA is a CA certificate with its private key, as a CA secret holds them (DataKeyCACertificate and
// DataKeyCAPrivateKey: the project's generator and Gardener's secrets manager use the same keys). It lets a
// caller outside this package issue a certificate from a CA that already exists in a namespace — a restored
// Etcd needs server certificates for its own names from the CA its clients already trust — without a second
// copy of the certificate code.
type SigningCA struct {
	ca *certificateAuthority
}

// ParseSigningCA reads a CA from its PEM certificate and key; it fails unless the certificate may sign and
// the key belongs to it.
func ParseSigningCA(certPEM, keyPEM []byte) (*SigningCA, error) {
	ca, err := parseCertificateAuthority(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &SigningCA{ca: ca}, nil
}

// Signed tells whether cert carries a valid signature of this CA.
func (c *SigningCA) Signed(cert *x509.Certificate) bool {
	return cert.CheckSignatureFrom(c.ca.cert) == nil
}

// ReissueWithDNSNames issues a certificate with a new key that is old in every respect a verifier looks at —
// subject, key usages, extended key usages, IP addresses, URIs, e-mail addresses and lifetime (counted from
// now, never beyond the CA's end) — except its DNS names, which are dnsNames. Both are PEM encoded.
func (c *SigningCA) ReissueWithDNSNames(old *x509.Certificate, dnsNames []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the key of %q: %w", old.Subject.CommonName, err)
	}
	template, err := baseTemplate(old.Subject.CommonName, key.Public(), now, old.NotAfter.Sub(old.NotBefore))
	if err != nil {
		return nil, nil, err
	}
	template.Subject = old.Subject
	template.Subject.Names = nil // parsed attributes; the fields and ExtraNames are what is encoded
	template.KeyUsage = old.KeyUsage
	template.ExtKeyUsage = old.ExtKeyUsage
	template.UnknownExtKeyUsage = old.UnknownExtKeyUsage
	template.IPAddresses = old.IPAddresses
	template.URIs = old.URIs
	template.EmailAddresses = old.EmailAddresses
	template.DNSNames = dnsNames
	pair, err := c.ca.sign(template, key)
	if err != nil {
		return nil, nil, err
	}
	return pair.certPEM, pair.keyPEM, nil
}

// ParseCertificatePEM reads the first certificate of a PEM bundle (a secret's DataKeyCertificate).
func ParseCertificatePEM(data []byte) (*x509.Certificate, error) { return parseCertificate(data) }
