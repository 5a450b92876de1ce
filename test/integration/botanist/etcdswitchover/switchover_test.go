package etcdswitchover_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// rotatedAt is when the shoot's CA rotation was initiated in the once-rotated cases.
var rotatedAt = time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)

// The project's component takes over etcd-main (highly available, so peer TLS too) from gardenlet's own
// etcd handling, with the TLS secrets of gardenlet's secrets manager: no TLS reference of the Etcd changes,
// the server certificate still verifies against the CA bundle kube-apiserver trusts, and no secret is
// created or modified.
func TestSwitchOverKeepsGardenletsTLSSecrets(t *testing.T) {
	for name, history := range map[string][]gardenletsecrets.CARotation{
		"CA never rotated (static ca-etcd)": {{}},
		"CA rotated once (ca-etcd-<hash>)": {
			{},
			{LastInitiation: &rotatedAt}, // Preparing: the bundle trusts old and new
			{LastInitiation: &rotatedAt, Completing: true}, // Completing: only the new CA remains
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			namespace := env.CreateNamespace(t)
			var refs etcd.TLSSecretRefs
			for _, phase := range history {
				refs = gardenletReconcile(t, namespace, etcd.RoleMain, true, phase)
			}
			gardenletEtcd(t, namespace, etcd.RoleMain, refs)
			settled := history[len(history)-1]
			settled.Completing = false // the next reconcile after a completed rotation
			if settled.LastInitiation == nil {
				g.Expect(env.SecretVersions(t, namespace)).To(HaveKey("ca-etcd"))
			} else {
				g.Expect(env.SecretVersions(t, namespace)).NotTo(HaveKey("ca-etcd"), "the first CA is gone after the rotation")
			}
			before := env.SecretVersions(t, namespace)
			refsBefore := tlsReferences(getEtcd(g, namespace, etcd.RoleMain))

			// The caller is the next gardenlet reconcile: its secrets manager, with the CAs generated.
			sm := gardenletSecretsManager(t, namespace, settled)
			values := etcd.Values{Role: etcd.RoleMain, HighAvailability: true, TLS: gardenersecrets.New(sm)}
			g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())

			obj := getEtcd(g, namespace, etcd.RoleMain)
			g.Expect(tlsReferences(obj)).To(Equal(refsBefore))
			g.Expect(env.SecretVersions(t, namespace)).To(Equal(before), "a secret was created or modified")
			g.Expect(verifyServer(g, namespace, etcd.RoleMain, obj, bundleOf(g, sm))).To(Succeed())
		})
	}
}
