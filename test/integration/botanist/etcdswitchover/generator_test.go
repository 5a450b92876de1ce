package etcdswitchover_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// The project's generator meets the secrets manager's never-rotated ca-etcd under the name it would use
// itself: it must refuse (naming the secret and its owner) rather than adopt it, and write nothing.
func TestGeneratorNeverWritesIntoASecretItDidNotCreate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	gardenletEtcd(t, namespace, etcd.RoleEvents, gardenletReconcile(t, namespace, etcd.RoleEvents, false, gardenletsecrets.CARotation{}))
	g.Expect(env.SecretVersions(t, namespace)).To(HaveKey("ca-etcd"), "a never-rotated CA keeps its static name")
	before := env.SecretVersions(t, namespace)
	etcdBefore := getEtcd(g, namespace, etcd.RoleEvents).ResourceVersion

	err := etcd.New(env.Client, namespace, etcd.Values{Role: etcd.RoleEvents}).Deploy(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("secret " + namespace + "/ca-etcd")))
	g.Expect(err).To(MatchError(ContainSubstring("not created by")))

	after := env.SecretVersions(t, namespace)
	for name, version := range before {
		g.Expect(after).To(HaveKeyWithValue(name, version), "secret %s was modified", name)
	}
	g.Expect(getEtcd(g, namespace, etcd.RoleEvents).ResourceVersion).To(Equal(etcdBefore), "the Etcd was rewritten")
}
