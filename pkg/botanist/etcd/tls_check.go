package etcd

import (
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"time"
)

// DefaultRenewalFraction re-issues a certificate once less than this fraction of its lifetime is left, so
// that a shoot reconciled only every few days still never serves an expired certificate.
const DefaultRenewalFraction = 0.2

// leafReissueReason returns why the leaf in data must be re-issued, or "" when it can be kept: it must parse,
// match its key, be signed by the signing CA, carry exactly the requested name, SANs and usages, and have
// more than the renewal fraction of its lifetime left.
func leafReissueReason(data map[string][]byte, ca *certificateAuthority, req leafRequest, now time.Time, renewalFraction float64) string {
	cert, err := parseCertificate(data[DataKeyCertificate])
	if err != nil {
		return "certificate unreadable: " + err.Error()
	}
	key, err := parsePrivateKey(data[DataKeyPrivateKey])
	if err != nil {
		return "private key unreadable: " + err.Error()
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return "private key does not match the certificate"
	}
	if err := cert.CheckSignatureFrom(ca.cert); err != nil {
		return fmt.Sprintf("not signed by the current CA %q", ca.cert.Subject.CommonName)
	}
	if cert.Subject.CommonName != req.commonName {
		return fmt.Sprintf("common name %q, want %q", cert.Subject.CommonName, req.commonName)
	}
	if !sameStrings(cert.DNSNames, req.dnsNames) {
		return fmt.Sprintf("DNS names %v, want %v", cert.DNSNames, req.dnsNames)
	}
	if !sameIPs(cert.IPAddresses, req.ipAddresses) {
		return fmt.Sprintf("IP addresses %v, want %v", cert.IPAddresses, req.ipAddresses)
	}
	if !sameUsages(cert.ExtKeyUsage, req.extKeyUsages) {
		return fmt.Sprintf("extended key usages %v, want %v", cert.ExtKeyUsage, req.extKeyUsages)
	}
	if reason := renewalDue(cert, now, renewalFraction); reason != "" {
		return reason
	}
	return ""
}

// renewalDue tells whether a certificate is expired, not yet valid, or within the renewal window.
func renewalDue(cert *x509.Certificate, now time.Time, renewalFraction float64) string {
	if now.Before(cert.NotBefore) {
		return "not valid before " + cert.NotBefore.Format(time.RFC3339)
	}
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	renewAt := cert.NotAfter.Add(-time.Duration(float64(lifetime) * renewalFraction))
	if !now.Before(renewAt) {
		return "expires at " + cert.NotAfter.Format(time.RFC3339) + ", within the renewal window"
	}
	return ""
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func sameIPs(a, b []net.IP) bool {
	if len(a) != len(b) {
		return false
	}
	for _, ip := range a {
		if !slices.ContainsFunc(b, ip.Equal) {
			return false
		}
	}
	return true
}

func sameUsages(a, b []x509.ExtKeyUsage) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
