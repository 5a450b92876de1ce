package etcdops

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
)

// Only where the old Etcd's name names the Etcd (the first label after an optional wildcard, the name or
// the name and a dash) is it replaced; a longer name that merely begins with it, the namespace and other
// names stay.
func TestRenamedDNSNamesReplaceOnlyTheEtcdsName(t *testing.T) {
	got := renamedDNSNames([]string{
		"etcd-main-local", "etcd-main", "etcd-main-client.shoot--a.svc", "*.etcd-main-peer.shoot--a.svc.cluster.local",
		"etcd-mainframe.shoot--a", "localhost", "etcd-main.etcd-main-ns", "api.etcd-main-client",
	}, "etcd-main", "etcd-main-restored")
	want := []string{
		"etcd-main-restored-local", "etcd-main-restored", "etcd-main-restored-client.shoot--a.svc", "*.etcd-main-restored-peer.shoot--a.svc.cluster.local",
		"etcd-mainframe.shoot--a", "localhost", "etcd-main-restored.etcd-main-ns", "api.etcd-main-client",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// Only PEM certificates are printed: text before a block (pem.Decode would skip it) or a key block
// keeps the whole value out of the output.
func TestOnlyCertificates(t *testing.T) {
	g := NewWithT(t)
	cert := "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
	key := "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"
	g.Expect(onlyCertificates([]byte(cert))).To(BeTrue())
	g.Expect(onlyCertificates([]byte("\n" + cert + cert))).To(BeTrue())
	g.Expect(onlyCertificates([]byte("secret text\n" + cert))).To(BeFalse())
	g.Expect(onlyCertificates([]byte(cert + "secret text\n" + cert))).To(BeFalse())
	g.Expect(onlyCertificates([]byte(cert + key))).To(BeFalse())
	g.Expect(onlyCertificates([]byte("plain"))).To(BeFalse())
}
