package etcd

import (
	"context"
	"crypto/x509"
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const testNamespace = "shoot--dev--tls"

// fakeClock is a settable clock for the renewal tests.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newFakeClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).Build()
}

func secretData(t *testing.T, c client.Client, name string) map[string][]byte {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, secret); err != nil {
		t.Fatalf("reading secret %s: %v", name, err)
	}
	return secret.Data
}

func mustCert(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	cert, err := parseCertificate(pemData)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// verify checks a leaf against a PEM bundle as a TLS peer would, for one name and usage.
func verify(t *testing.T, leafPEM, bundlePEM []byte, dnsName string, usage x509.ExtKeyUsage, now time.Time) error {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundlePEM) {
		t.Fatal("bundle holds no certificate")
	}
	_, err := mustCert(t, leafPEM).Verify(x509.VerifyOptions{Roots: roots, DNSName: dnsName, KeyUsages: []x509.ExtKeyUsage{usage}, CurrentTime: now})
	return err
}

func TestEnsureIssuesServerCertificateWithReferenceSANsAndUsages(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	names, err := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main"}).Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names).To(Equal(TLSSecretNames{CA: "ca-etcd", PeerCA: "ca-etcd-peer", Server: "etcd-server-main", Client: "etcd-client"}))

	server := mustCert(t, secretData(t, c, "etcd-server-main")[DataKeyCertificate])
	g.Expect(server.Subject.CommonName).To(Equal("etcd-server"))
	g.Expect(server.DNSNames).To(ConsistOf(
		"etcd-main-local",
		"etcd-main-client",
		"etcd-main-client.shoot--dev--tls",
		"etcd-main-client.shoot--dev--tls.svc",
		"etcd-main-client.shoot--dev--tls.svc.cluster.local",
		"*.etcd-main-peer",
		"*.etcd-main-peer.shoot--dev--tls",
		"*.etcd-main-peer.shoot--dev--tls.svc",
		"*.etcd-main-peer.shoot--dev--tls.svc.cluster.local",
	))
	g.Expect(server.IPAddresses).To(HaveLen(2))
	g.Expect(server.IPAddresses[0].Equal(net.ParseIP("127.0.0.1"))).To(BeTrue())
	g.Expect(server.IPAddresses[1].Equal(net.ParseIP("::1"))).To(BeTrue())
	g.Expect(server.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
	g.Expect(server.IsCA).To(BeFalse())

	bundle := secretData(t, c, "ca-etcd")[DataKeyCABundle]
	serverPEM := secretData(t, c, "etcd-server-main")[DataKeyCertificate]
	now := time.Now()
	g.Expect(verify(t, serverPEM, bundle, "etcd-main-client.shoot--dev--tls.svc", x509.ExtKeyUsageServerAuth, now)).To(Succeed())
	g.Expect(verify(t, serverPEM, bundle, "etcd-main-2.etcd-main-peer.shoot--dev--tls.svc.cluster.local", x509.ExtKeyUsageServerAuth, now)).To(Succeed())
	g.Expect(verify(t, serverPEM, bundle, "etcd-events-client", x509.ExtKeyUsageServerAuth, now)).NotTo(Succeed())
}

func TestEnsureIssuesCAsAndClientCertificate(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	_, err := NewTLSSecrets(c, testNamespace, TLSValues{Role: "events"}).Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())

	for name, cn := range map[string]string{"ca-etcd": "etcd", "ca-etcd-peer": "etcd-peer"} {
		data := secretData(t, c, name)
		g.Expect(data).To(HaveKey(DataKeyCAPrivateKey))
		ca := mustCert(t, data[DataKeyCACertificate])
		g.Expect(ca.Subject.CommonName).To(Equal(cn))
		g.Expect(ca.IsCA).To(BeTrue())
		g.Expect(data[DataKeyCABundle]).To(Equal(data[DataKeyCACertificate]))
	}

	clientData := secretData(t, c, "etcd-client")
	clientCert := mustCert(t, clientData[DataKeyCertificate])
	g.Expect(clientCert.Subject.CommonName).To(Equal("etcd-client"))
	g.Expect(clientCert.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageClientAuth))
	bundle := secretData(t, c, "ca-etcd")[DataKeyCABundle]
	g.Expect(verify(t, clientData[DataKeyCertificate], bundle, "", x509.ExtKeyUsageClientAuth, time.Now())).To(Succeed())
	g.Expect(verify(t, clientData[DataKeyCertificate], bundle, "", x509.ExtKeyUsageServerAuth, time.Now())).NotTo(Succeed())

	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "etcd-peer-server-events"}, &corev1.Secret{})).
		NotTo(Succeed(), "a non-HA etcd gets no peer certificate")
}

func TestEnsureIssuesPeerCertificateSignedByPeerCAWhenHighlyAvailable(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	names, err := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main", HighAvailability: true}).Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names.PeerServer).To(Equal("etcd-peer-server-main"))

	peerPEM := secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]
	peer := mustCert(t, peerPEM)
	g.Expect(peer.DNSNames).To(ConsistOf(PeerDNSNames("main", testNamespace)))
	g.Expect(peer.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
	member := "etcd-main-1.etcd-main-peer.shoot--dev--tls.svc"
	g.Expect(verify(t, peerPEM, secretData(t, c, "ca-etcd-peer")[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, time.Now())).To(Succeed())
	g.Expect(verify(t, peerPEM, secretData(t, c, "ca-etcd-peer")[DataKeyCABundle], "", x509.ExtKeyUsageClientAuth, time.Now())).To(Succeed())
	g.Expect(verify(t, peerPEM, secretData(t, c, "ca-etcd")[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, time.Now())).NotTo(Succeed())
}

func TestEnsureKeepsValidSecrets(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	tlsSecrets := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main", HighAvailability: true})
	_, err := tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	before := allSecrets(t, c)
	g.Expect(before).To(HaveLen(5))

	_, err = tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(allSecrets(t, c)).To(Equal(before))
}

func allSecrets(t *testing.T, c client.Client) map[string]corev1.Secret {
	t.Helper()
	list := &corev1.SecretList{}
	if err := c.List(context.Background(), list, client.InNamespace(testNamespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Secret{}
	for _, s := range list.Items {
		out[s.Name] = s
	}
	return out
}

func TestEnsureRenewsLeavesInTheRenewalWindowOnly(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	values := TLSValues{Role: "main", CertificateValidity: 100 * time.Hour, Clock: clock.Now}
	tlsSecrets := NewTLSSecrets(c, testNamespace, values)
	_, err := tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	first := allSecrets(t, c)

	clock.now = clock.now.Add(70 * time.Hour) // 30% of the lifetime left: keep
	_, err = tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(allSecrets(t, c)).To(Equal(first))

	clock.now = clock.now.Add(15 * time.Hour) // less than 20% left: renew the leaves, keep the CA
	_, err = tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	second := allSecrets(t, c)
	g.Expect(second["ca-etcd"].Data).To(Equal(first["ca-etcd"].Data))
	for _, name := range []string{"etcd-server-main", "etcd-client"} {
		g.Expect(second[name].Data[DataKeyCertificate]).NotTo(Equal(first[name].Data[DataKeyCertificate]), name)
		renewed := mustCert(t, second[name].Data[DataKeyCertificate])
		g.Expect(renewed.NotAfter).To(BeTemporally(">", clock.now.Add(99*time.Hour)))
		g.Expect(verify(t, second[name].Data[DataKeyCertificate], second["ca-etcd"].Data[DataKeyCABundle], "", x509.ExtKeyUsageClientAuth, clock.now)).To(Succeed())
	}
}

func TestEnsureReissuesCertificateWhoseSANsNoLongerMatch(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	tlsSecrets := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main"})
	_, err := tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())

	// An older generator issued the server certificate without the local name.
	caData := secretData(t, c, "ca-etcd")
	ca, err := parseCertificateAuthority(caData[DataKeyCACertificate], caData[DataKeyCAPrivateKey])
	g.Expect(err).NotTo(HaveOccurred())
	req := tlsSecrets.serverRequest()
	req.dnsNames = req.dnsNames[1:]
	stale, err := ca.issue(req, time.Now(), time.Hour*24*365)
	g.Expect(err).NotTo(HaveOccurred())
	writeSecretData(t, c, "etcd-server-main", map[string][]byte{DataKeyCertificate: stale.certPEM, DataKeyPrivateKey: stale.keyPEM})

	_, err = tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mustCert(t, secretData(t, c, "etcd-server-main")[DataKeyCertificate]).DNSNames).To(ContainElement("etcd-main-local"))
}

func TestEnsureReplacesUnusableCAAndReissuesItsCertificates(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	tlsSecrets := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main"})
	_, err := tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	oldServer := secretData(t, c, "etcd-server-main")[DataKeyCertificate]

	writeSecretData(t, c, "ca-etcd", map[string][]byte{DataKeyCACertificate: []byte("garbage")})
	_, err = tlsSecrets.Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())

	bundle := secretData(t, c, "ca-etcd")[DataKeyCABundle]
	newServer := secretData(t, c, "etcd-server-main")[DataKeyCertificate]
	g.Expect(newServer).NotTo(Equal(oldServer))
	g.Expect(verify(t, newServer, bundle, "etcd-main-local", x509.ExtKeyUsageServerAuth, time.Now())).To(Succeed())
	g.Expect(verify(t, oldServer, bundle, "etcd-main-local", x509.ExtKeyUsageServerAuth, time.Now())).NotTo(Succeed())
	g.Expect(verify(t, secretData(t, c, "etcd-client")[DataKeyCertificate], bundle, "", x509.ExtKeyUsageClientAuth, time.Now())).To(Succeed())
}

// A CA under the generator's name that someone else made (here without a bundle, like the never-rotated
// ca-etcd of gardenlet's secrets manager) is neither adopted nor completed: Ensure fails naming it and
// writes nothing.
func TestEnsureRefusesACASecretItDidNotCreate(t *testing.T) {
	g := NewWithT(t)
	c := newFakeClient(t)
	ca, err := newCertificateAuthority("etcd", time.Now(), time.Hour*24*365)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ca-etcd", Namespace: testNamespace, Labels: map[string]string{"managed-by": "secrets-manager"}},
		Data:       map[string][]byte{DataKeyCACertificate: ca.certPEM, DataKeyCAPrivateKey: ca.keyPEM},
	})).To(Succeed())
	before := allSecrets(t, c)

	_, err = NewTLSSecrets(c, testNamespace, TLSValues{Role: "main"}).Ensure(context.Background())
	g.Expect(IsForeignSecret(err)).To(BeTrue(), "error %v", err)
	g.Expect(err).To(MatchError(ContainSubstring("secret " + testNamespace + "/ca-etcd was not created by gardener-etcd")))
	g.Expect(allSecrets(t, c)).To(Equal(before), "nothing may be written")
}

func writeSecretData(t *testing.T, c client.Client, name string, data map[string][]byte) {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data = data
	if err := c.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
}
