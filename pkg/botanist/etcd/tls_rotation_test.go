package etcd

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestPeerCARotationTrustsNewCABeforeSigningWithIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newFakeClient(t)
	tlsSecrets := NewTLSSecrets(c, testNamespace, TLSValues{Role: "main", HighAvailability: true})
	_, err := tlsSecrets.Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tlsSecrets.PeerCARotation(ctx)).To(Equal(PeerCARotationIdle))
	g.Expect(tlsSecrets.IssuePeerCertificatesWithNewCA(ctx)).To(MatchError(ErrPeerCARotationNotStarted))

	serverCA := secretData(t, c, "ca-etcd")
	oldCA := secretData(t, c, "ca-etcd-peer")[DataKeyCACertificate]
	oldPeer := secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]
	member := "etcd-main-0.etcd-main-peer." + testNamespace

	// Step 1: the bundle trusts old and new; nothing is signed by the new CA yet.
	g.Expect(tlsSecrets.StartPeerCARotation(ctx)).To(Succeed())
	g.Expect(tlsSecrets.PeerCARotation(ctx)).To(Equal(PeerCARotationTrusting))
	trusting := secretData(t, c, "ca-etcd-peer")
	bundleCerts, err := parseCertificates(trusting[DataKeyCABundle])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundleCerts).To(HaveLen(2))
	g.Expect(trusting[DataKeyCACertificate]).To(Equal(oldCA))
	g.Expect(secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]).To(Equal(oldPeer))
	g.Expect(tlsSecrets.CompletePeerCARotation(ctx)).NotTo(Succeed(), "the old CA cannot be dropped before re-issuing")

	// Idempotent while under way: neither a second start nor Ensure change anything.
	g.Expect(tlsSecrets.StartPeerCARotation(ctx)).To(Succeed())
	_, err = tlsSecrets.Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(secretData(t, c, "ca-etcd-peer")).To(Equal(trusting))
	g.Expect(secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]).To(Equal(oldPeer))

	// Step 2: the new CA signs; the bundle verifies certificates of both CAs.
	g.Expect(tlsSecrets.IssuePeerCertificatesWithNewCA(ctx)).To(Succeed())
	g.Expect(tlsSecrets.PeerCARotation(ctx)).To(Equal(PeerCARotationIssued))
	issued := secretData(t, c, "ca-etcd-peer")
	g.Expect(issued[DataKeyCACertificate]).To(Equal(trusting[dataKeyNextCACertificate]))
	g.Expect(issued).NotTo(HaveKey(dataKeyNextCACertificate))
	newPeer := secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]
	g.Expect(newPeer).NotTo(Equal(oldPeer))
	g.Expect(mustCert(t, newPeer).CheckSignatureFrom(mustCert(t, issued[DataKeyCACertificate]))).To(Succeed())
	now := time.Now()
	g.Expect(verify(t, newPeer, issued[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, now)).To(Succeed())
	g.Expect(verify(t, oldPeer, issued[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, now)).To(Succeed())

	// Step 3: only the new CA is trusted.
	g.Expect(tlsSecrets.CompletePeerCARotation(ctx)).To(Succeed())
	g.Expect(tlsSecrets.PeerCARotation(ctx)).To(Equal(PeerCARotationIdle))
	done := secretData(t, c, "ca-etcd-peer")
	g.Expect(done[DataKeyCABundle]).To(Equal(done[DataKeyCACertificate]))
	g.Expect(verify(t, newPeer, done[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, now)).To(Succeed())
	g.Expect(verify(t, oldPeer, done[DataKeyCABundle], member, x509.ExtKeyUsageServerAuth, now)).NotTo(Succeed())

	// Completing again is a no-op, and the server CA was never touched.
	g.Expect(tlsSecrets.CompletePeerCARotation(ctx)).To(Succeed())
	g.Expect(secretData(t, c, "ca-etcd")).To(Equal(serverCA))
	_, err = tlsSecrets.Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(secretData(t, c, "etcd-peer-server-main")[DataKeyCertificate]).To(Equal(newPeer))
}
