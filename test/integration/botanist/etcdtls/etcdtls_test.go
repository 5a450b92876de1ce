// Package etcdtls_test checks the TLS secrets of the botanist etcd component against a real apiserver: they
// are written, and a second run leaves every one of them untouched.
package etcdtls_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

func TestTLSSecretsAreWrittenOnceAndKept(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)

	for _, role := range []string{"main", "events"} {
		_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: role, HighAvailability: role == "main"}).Ensure(ctx)
		g.Expect(err).NotTo(HaveOccurred())
	}
	first := env.SecretVersions(t, namespace)
	g.Expect(first).To(HaveKey("ca-etcd"))
	g.Expect(first).To(HaveKey("ca-etcd-peer"))
	g.Expect(first).To(HaveKey("etcd-client"))
	g.Expect(first).To(HaveKey("etcd-server-main"))
	g.Expect(first).To(HaveKey("etcd-server-events"))
	g.Expect(first).To(HaveKey("etcd-peer-server-main"))
	g.Expect(first).NotTo(HaveKey("etcd-peer-server-events"))

	server := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-server-main"}, server)).To(Succeed())
	g.Expect(server.Type).To(Equal(corev1.SecretTypeTLS))
	g.Expect(server.Data).To(HaveKey("tls.crt"))
	g.Expect(server.Data).To(HaveKey("tls.key"))
	ca := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "ca-etcd"}, ca)).To(Succeed())
	g.Expect(ca.Data).To(HaveKey("bundle.crt"))
	g.Expect(ca.Data).To(HaveKey("ca.crt"))

	for _, role := range []string{"main", "events"} {
		_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: role, HighAvailability: role == "main"}).Ensure(ctx)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(env.SecretVersions(t, namespace)).To(Equal(first))
}

func TestPeerCARotationRoundTripsThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	tlsSecrets := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: "main", HighAvailability: true})
	_, err := tlsSecrets.Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	before := env.SecretVersions(t, namespace)

	g.Expect(tlsSecrets.StartPeerCARotation(ctx)).To(Succeed())
	afterStart := env.SecretVersions(t, namespace)
	g.Expect(afterStart["ca-etcd-peer"]).NotTo(Equal(before["ca-etcd-peer"]))
	g.Expect(afterStart["etcd-peer-server-main"]).To(Equal(before["etcd-peer-server-main"]))

	g.Expect(tlsSecrets.IssuePeerCertificatesWithNewCA(ctx)).To(Succeed())
	afterIssue := env.SecretVersions(t, namespace)
	g.Expect(afterIssue["etcd-peer-server-main"]).NotTo(Equal(before["etcd-peer-server-main"]))
	g.Expect(afterIssue["etcd-server-main"]).To(Equal(before["etcd-server-main"]))

	g.Expect(tlsSecrets.CompletePeerCARotation(ctx)).To(Succeed())
	g.Expect(tlsSecrets.PeerCARotation(ctx)).To(Equal(etcd.PeerCARotationIdle))
}
