package etcd

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-etcd/gardener-etcd/pkg/apis"
)

func TestExistingTLSReferencesPeerSecretsOnlyWithPeerTLS(t *testing.T) {
	g := NewWithT(t)
	source := ExistingTLS{Refs: DefaultTLSSecretRefs(RoleMain)}
	single, err := source.TLSSecrets(context.Background(), TLSRequest{Namespace: testNamespace, Role: RoleMain})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(single).To(Equal(TLSSecretRefs{ClientCA: CABundleRef{Name: "ca-etcd", DataKey: "bundle.crt"}, Server: "etcd-server-main", Client: "etcd-client"}))
	multi, err := source.TLSSecrets(context.Background(), TLSRequest{Namespace: testNamespace, Role: RoleMain, PeerTLS: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(multi.PeerCA).To(Equal(CABundleRef{Name: "ca-etcd-peer", DataKey: "bundle.crt"}))
	g.Expect(multi.PeerServer).To(Equal("etcd-peer-server-main"))
}

// A source that leaves a reference empty fails Deploy before anything is written, naming the field.
func TestDeployRefusesEmptyTLSReferences(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).Build()
	refs := DefaultTLSSecretRefs(RoleEvents)
	refs.Client = ""
	err := New(c, testNamespace, Values{Role: RoleEvents, TLS: ExistingTLS{Refs: refs}}).Deploy(context.Background())
	g.Expect(err).To(MatchError(ContainSubstring("the TLS source returned no [Client]")))

	refs = DefaultTLSSecretRefs(RoleMain)
	refs.PeerCA.DataKey = ""
	err = New(c, testNamespace, Values{Role: RoleMain, HighAvailability: true, TLS: ExistingTLS{Refs: refs}}).Deploy(context.Background())
	g.Expect(err).To(MatchError(ContainSubstring("the TLS source returned no [PeerCA.DataKey]")))
}
