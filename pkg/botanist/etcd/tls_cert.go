package etcd

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Keys are ECDSA P-256: etcd, the sidecar and Go's TLS stack all support it, its 128-bit security level matches
// RSA 3072, and generating a key takes well under a millisecond instead of a noticeable fraction of a second
// for RSA 3072 — which matters because every shoot reconcile may issue several certificates and the tests
// issue hundreds.

// certificateAuthority is a parsed CA certificate with its private key, able to sign leaf certificates.
type certificateAuthority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// leafRequest describes the leaf certificate a secret must hold; checks compare existing certificates with it.
type leafRequest struct {
	commonName   string
	dnsNames     []string
	ipAddresses  []net.IP
	extKeyUsages []x509.ExtKeyUsage
}

// issuedPair is a freshly issued certificate and its key, both PEM encoded.
type issuedPair struct {
	certPEM []byte
	keyPEM  []byte
}

// newCertificateAuthority creates a self-signed CA valid from now (minus a small skew allowance) for validity.
func newCertificateAuthority(commonName string, now time.Time, validity time.Duration) (*certificateAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the key of CA %q: %w", commonName, err)
	}
	template, err := baseTemplate(commonName, key.Public(), now, validity)
	if err != nil {
		return nil, err
	}
	template.IsCA = true
	template.BasicConstraintsValid = true
	template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA %q: %w", commonName, err)
	}
	keyPEM, err := encodePrivateKey(key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certificateAuthority{cert: cert, key: key, certPEM: encodeCertificate(der), keyPEM: keyPEM}, nil
}

// parseCertificateAuthority reads a CA from its PEM certificate and key and checks that they belong together
// and that the certificate may sign.
func parseCertificateAuthority(certPEM, keyPEM []byte) (*certificateAuthority, error) {
	cert, err := parseCertificate(certPEM)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, errors.New("certificate is not a signing CA")
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, errors.New("CA private key does not match the CA certificate")
	}
	return &certificateAuthority{cert: cert, key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// issue signs a new leaf certificate with a new key for the request.
func (ca *certificateAuthority) issue(req leafRequest, now time.Time, validity time.Duration) (issuedPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return issuedPair{}, fmt.Errorf("generating the key of %q: %w", req.commonName, err)
	}
	template, err := baseTemplate(req.commonName, key.Public(), now, validity)
	if err != nil {
		return issuedPair{}, err
	}
	template.KeyUsage = x509.KeyUsageDigitalSignature
	template.ExtKeyUsage = req.extKeyUsages
	template.DNSNames = req.dnsNames
	template.IPAddresses = req.ipAddresses
	return ca.sign(template, key)
}

// sign signs the leaf template for key with the CA.
func (ca *certificateAuthority) sign(template *x509.Certificate, key *ecdsa.PrivateKey) (issuedPair, error) {
	template.AuthorityKeyId = ca.cert.SubjectKeyId
	// A leaf never outlives the CA that signed it: verifiers would reject it after the CA expires anyway.
	if template.NotAfter.After(ca.cert.NotAfter) {
		template.NotAfter = ca.cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, key.Public(), ca.key)
	if err != nil {
		return issuedPair{}, fmt.Errorf("signing %q with CA %q: %w", template.Subject.CommonName, ca.cert.Subject.CommonName, err)
	}
	keyPEM, err := encodePrivateKey(key)
	if err != nil {
		return issuedPair{}, err
	}
	return issuedPair{certPEM: encodeCertificate(der), keyPEM: keyPEM}, nil
}

// clockSkew back-dates NotBefore so that hosts whose clocks lag slightly accept a fresh certificate.
const clockSkew = 5 * time.Minute

func baseTemplate(commonName string, pub crypto.PublicKey, now time.Time, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	subjectKeyID, err := subjectKeyIdentifier(pub)
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-clockSkew).UTC(),
		NotAfter:     now.Add(validity).UTC(),
		SubjectKeyId: subjectKeyID,
	}, nil
}

func subjectKeyIdentifier(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encoding a public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return sum[:20], nil
}

func encodeCertificate(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodePrivateKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding a private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// parseCertificate reads the first certificate of a PEM block sequence.
func parseCertificate(data []byte) (*x509.Certificate, error) {
	certs, err := parseCertificates(data)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// parseCertificates reads every certificate of a PEM bundle; it fails on an empty bundle.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing a certificate: %w", err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// parsePrivateKey accepts the encodings other generators use for existing secrets: SEC 1 EC, PKCS #1 RSA and
// PKCS #8.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	if key, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	if key, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing a private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("private key cannot sign")
	}
	return signer, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	ea, ok := a.(equaler)
	return ok && ea.Equal(b)
}
