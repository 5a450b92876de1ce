package etcdswitchover_test

import (
	"context"
	"crypto/x509"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// After the switch-over, a CA rotation of the shoot runs through the secrets manager's phases, and each
// Deploy of the project's component references what the phase needs: while preparing, a bundle with the old
// and the new CA (the server certificate is still signed by the old CA, the client certificate already by the
// new one, and both verify); while completing, a bundle with only the new CA and certificates it signed.
func TestClientCARotationFollowsTheSecretsManagersPhases(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	gardenletEtcd(t, namespace, etcd.RoleMain, gardenletReconcile(t, namespace, etcd.RoleMain, true, gardenletsecrets.CARotation{}))
	deploy := func(rotation gardenletsecrets.CARotation) *etcd.TLSSecretRefs {
		sm := gardenletSecretsManager(t, namespace, rotation)
		values := etcd.Values{Role: etcd.RoleMain, HighAvailability: true, TLS: gardenersecrets.New(sm),
			PeerCARolloutWait: func(context.Context, etcd.PeerCARotationPhase) error { return nil }}
		if rotation.LastInitiation != nil && !rotation.Completing { // gardenlet's order while preparing
			g.Expect(etcd.New(env.Client, namespace, values).RolloutPeerCA(ctx)).To(Succeed())
		}
		g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())
		obj := getEtcd(g, namespace, etcd.RoleMain)
		g.Expect(referencedBundle(g, namespace, obj)).To(Equal(bundleOf(g, sm)), "the Etcd trusts what kube-apiserver trusts")
		g.Expect(sm.Cleanup(ctx)).To(Succeed()) // as gardenlet ends its reconcile
		tls := obj.Spec.Etcd.ClientUrlTLS
		return &etcd.TLSSecretRefs{
			ClientCA: etcd.CABundleRef{Name: tls.TLSCASecretRef.Name, DataKey: *tls.TLSCASecretRef.DataKey},
			Server:   tls.ServerTLSSecretRef.Name,
			Client:   tls.ClientTLSSecretRef.Name,
		}
	}
	verifyAll := func(refs *etcd.TLSSecretRefs) {
		bundle := getSecret(g, namespace, refs.ClientCA.Name).Data[refs.ClientCA.DataKey]
		g.Expect(verifyLeaf(g, namespace, refs.Server, bundle, "etcd-main-client."+namespace+".svc", x509.ExtKeyUsageServerAuth)).To(Succeed())
		g.Expect(verifyLeaf(g, namespace, refs.Client, bundle, "", x509.ExtKeyUsageClientAuth)).To(Succeed())
	}
	before := getEtcd(g, namespace, etcd.RoleMain)
	oldPeerBundle := before.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name
	oldBundle := referencedBundle(g, namespace, before)

	preparing := deploy(gardenletsecrets.CARotation{LastInitiation: &rotatedAt})
	g.Expect(bundleSize(getSecret(g, namespace, preparing.ClientCA.Name).Data["bundle.crt"])).To(Equal(2), "old and new CA")
	verifyAll(preparing)
	g.Expect(verifyLeaf(g, namespace, preparing.Server, oldBundle, "etcd-main-client."+namespace+".svc", x509.ExtKeyUsageServerAuth)).
		To(Succeed(), "members not yet restarted still trust only the old CA")
	peerBundle := getEtcd(g, namespace, etcd.RoleMain).Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name
	g.Expect(peerBundle).NotTo(Equal(oldPeerBundle))
	g.Expect(bundleSize(getSecret(g, namespace, peerBundle).Data["bundle.crt"])).To(Equal(2), "old and new peer CA")

	completing := deploy(gardenletsecrets.CARotation{LastInitiation: &rotatedAt, Completing: true})
	newBundle := getSecret(g, namespace, completing.ClientCA.Name).Data["bundle.crt"]
	g.Expect(bundleSize(newBundle)).To(Equal(1), "only the new CA")
	verifyAll(completing)
	g.Expect(completing.Server).NotTo(Equal(preparing.Server), "the server certificate is re-issued by the new CA")
	g.Expect(verifyLeaf(g, namespace, completing.Server, oldBundle, "etcd-main-client."+namespace+".svc", x509.ExtKeyUsageServerAuth)).
		NotTo(Succeed(), "the old CA signs nothing any more")
	g.Expect(env.SecretVersions(t, namespace)).NotTo(HaveKey("ca-etcd"), "the old CA is gone after the rotation")

	// The reconciles after the rotation change nothing.
	g.Expect(deploy(gardenletsecrets.CARotation{LastInitiation: &rotatedAt})).To(Equal(completing))
}

// With the secrets manager's TLS, RolloutPeerCA does what Gardener's etcd component does: it deploys the
// secrets manager's current peer bundle and waits for the rollout once. The project's own three-step
// rotation (which writes ca-etcd-peer) does not run.
func TestRolloutPeerCADeploysTheSecretsManagersPeerBundle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	gardenletEtcd(t, namespace, etcd.RoleMain, gardenletReconcile(t, namespace, etcd.RoleMain, true, gardenletsecrets.CARotation{}))

	before := getEtcd(g, namespace, etcd.RoleMain).Spec.Etcd.PeerUrlTLS
	sm := gardenletSecretsManager(t, namespace, gardenletsecrets.CARotation{LastInitiation: &rotatedAt})
	var waited []etcd.PeerCARotationPhase
	values := etcd.Values{Role: etcd.RoleMain, HighAvailability: true, TLS: gardenersecrets.New(sm),
		PeerCARolloutWait: func(_ context.Context, phase etcd.PeerCARotationPhase) error {
			waited = append(waited, phase)
			return nil
		}}
	g.Expect(etcd.New(env.Client, namespace, values).RolloutPeerCA(ctx)).To(Succeed())

	g.Expect(waited).To(Equal([]etcd.PeerCARotationPhase{etcd.PeerCARotationIdle}))
	peerBundle, found := sm.Get("ca-etcd-peer")
	g.Expect(found).To(BeTrue())
	rolled := getEtcd(g, namespace, etcd.RoleMain).Spec.Etcd.PeerUrlTLS
	g.Expect(rolled.TLSCASecretRef.Name).To(Equal(peerBundle.Name))
	g.Expect(bundleSize(peerBundle.Data["bundle.crt"])).To(Equal(2))
	g.Expect(rolled.ServerTLSSecretRef.Name).To(Equal(before.ServerTLSSecretRef.Name),
		"the members keep the peer certificate of the old CA until every member trusts the new one")
	list := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{etcd.ManagedByLabel: "gardener-etcd"})).To(Succeed())
	g.Expect(list.Items).To(BeEmpty(), "the project's generator wrote secrets")
}

// A Deploy that would give the members a peer certificate of the new CA before they trust it is refused,
// naming both secrets, and writes nothing; after RolloutPeerCA the same Deploy brings the new certificate. That
// is the order gardenlet keeps in the Preparing phase of a CA rotation.
func TestDeployRefusesAPeerCertificateTheMembersDoNotTrustYet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	gardenletEtcd(t, namespace, etcd.RoleMain, gardenletReconcile(t, namespace, etcd.RoleMain, true, gardenletsecrets.CARotation{}))
	before := getEtcd(g, namespace, etcd.RoleMain)

	sm := gardenletSecretsManager(t, namespace, gardenletsecrets.CARotation{LastInitiation: &rotatedAt})
	values := etcd.Values{Role: etcd.RoleMain, HighAvailability: true, TLS: gardenersecrets.New(sm),
		PeerCARolloutWait: func(context.Context, etcd.PeerCARotationPhase) error { return nil }}
	err := etcd.New(env.Client, namespace, values).Deploy(ctx)
	var untrusted *etcd.UntrustedPeerCertificateError
	g.Expect(errors.As(err, &untrusted)).To(BeTrue(), "Deploy: %v", err)
	g.Expect(untrusted.Bundle).To(Equal(before.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name))
	g.Expect(getEtcd(g, namespace, etcd.RoleMain).ResourceVersion).To(Equal(before.ResourceVersion), "the refused Deploy wrote nothing")

	g.Expect(etcd.New(env.Client, namespace, values).RolloutPeerCA(ctx)).To(Succeed())
	g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())
	after := getEtcd(g, namespace, etcd.RoleMain).Spec.Etcd.PeerUrlTLS
	g.Expect(after.ServerTLSSecretRef.Name).NotTo(Equal(before.Spec.Etcd.PeerUrlTLS.ServerTLSSecretRef.Name), "the new peer certificate")
}
