package etcd_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func parsePEM(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
	return certs
}

// peerState is what the members would load at one rollout: the CAs they trust and the CA that signed the
// certificate they present.
type peerState struct {
	phase    etcd.PeerCARotationPhase
	bundle   []*x509.Certificate
	signedBy *x509.Certificate
	checksum string
}

func TestRolloutPeerCATrustsTheNewCABeforeSigningWithItAndDropsTheOldLast(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	runDruid(t, namespace)
	v := values(etcd.RoleEvents)
	v.HighAvailability = true
	g.Expect(etcd.New(env.Client, namespace, v).Deploy(ctx)).To(Succeed())
	g.Expect(etcd.New(env.Client, namespace, v).Wait(ctx)).To(Succeed())
	oldCA := parsePEM(t, getSecret(g, namespace, "ca-etcd-peer").Data["ca.crt"])[0]
	checksumBefore := getEtcd(g, namespace, "etcd-events").Spec.Annotations[etcd.PeerTLSChecksumAnnotation]

	var states []peerState
	var component etcd.Interface
	v.PeerCARolloutWait = func(ctx context.Context, phase etcd.PeerCARotationPhase) error {
		// The rollout was requested before the wait: record what the pods roll to, then wait as Gardener does.
		state := peerState{phase: phase, bundle: parsePEM(t, getSecret(g, namespace, "ca-etcd-peer").Data["bundle.crt"])}
		leaf := parsePEM(t, getSecret(g, namespace, "etcd-peer-server-events").Data["tls.crt"])[0]
		for _, ca := range state.bundle {
			if leaf.CheckSignatureFrom(ca) == nil {
				state.signedBy = ca
			}
		}
		state.checksum = getEtcd(g, namespace, "etcd-events").Spec.Annotations[etcd.PeerTLSChecksumAnnotation]
		states = append(states, state)
		return component.Wait(ctx)
	}
	component = etcd.New(env.Client, namespace, v)
	g.Expect(component.RolloutPeerCA(ctx)).To(Succeed())

	g.Expect(states).To(HaveLen(3))
	g.Expect([]etcd.PeerCARotationPhase{states[0].phase, states[1].phase, states[2].phase}).To(Equal(
		[]etcd.PeerCARotationPhase{etcd.PeerCARotationTrusting, etcd.PeerCARotationIssued, etcd.PeerCARotationIdle}))

	// 1. Both CAs trusted, certificate still from the old one.
	g.Expect(states[0].bundle).To(HaveLen(2))
	g.Expect(states[0].bundle[0].Equal(oldCA)).To(BeTrue())
	newCA := states[0].bundle[1]
	g.Expect(newCA.Equal(oldCA)).To(BeFalse())
	g.Expect(states[0].signedBy.Equal(oldCA)).To(BeTrue())
	// 2. Certificate from the new CA, old CA still trusted for members not yet restarted.
	g.Expect(states[1].bundle).To(HaveLen(2))
	g.Expect(states[1].signedBy.Equal(newCA)).To(BeTrue())
	// 3. Only the new CA.
	g.Expect(states[2].bundle).To(HaveLen(1))
	g.Expect(states[2].bundle[0].Equal(newCA)).To(BeTrue())
	g.Expect(states[2].signedBy.Equal(newCA)).To(BeTrue())

	// Every step changed what the pods load, so every step rolled them.
	checksums := map[string]bool{checksumBefore: true}
	for _, s := range states {
		checksums[s.checksum] = true
	}
	g.Expect(checksums).To(HaveLen(4))
	phase, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: etcd.RoleEvents, HighAvailability: true}).PeerCARotation(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(phase).To(Equal(etcd.PeerCARotationIdle))
}

// Without peer TLS in use nobody presents a peer certificate, so the rotation needs no rollout at all.
func TestRolloutPeerCAWithoutPeerTLSRotatesTheSecretsAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	v := values(etcd.RoleEvents)
	g.Expect(etcd.New(env.Client, namespace, v).Deploy(ctx)).To(Succeed())
	oldCA := parsePEM(t, getSecret(g, namespace, "ca-etcd-peer").Data["ca.crt"])[0]
	v.PeerCARolloutWait = func(context.Context, etcd.PeerCARotationPhase) error {
		t.Error("no rollout expected for an etcd without peer TLS")
		return nil
	}
	g.Expect(etcd.New(env.Client, namespace, v).RolloutPeerCA(ctx)).To(Succeed())
	bundle := parsePEM(t, getSecret(g, namespace, "ca-etcd-peer").Data["bundle.crt"])
	g.Expect(bundle).To(HaveLen(1))
	g.Expect(bundle[0].Equal(oldCA)).To(BeFalse())
	g.Expect(getEtcd(g, namespace, "etcd-events").Spec.Etcd.PeerUrlTLS).To(BeNil())
	g.Expect(secretExists(namespace, "etcd-peer-server-events")).To(BeFalse())
}
