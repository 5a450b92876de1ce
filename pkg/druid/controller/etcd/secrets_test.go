package etcd

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

func TestMissingSecrets(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "complete", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "no-key", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": nil}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "swift-app-cred", Namespace: "ns"}, Data: map[string][]byte{
			"authURL": []byte("u"), "domainName": []byte("d"), "tenantName": []byte("t"), "region": []byte("r"),
			"applicationCredentialID": []byte("id"), "applicationCredentialSecret": []byte("s")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "swift-half", Namespace: "ns"}, Data: map[string][]byte{
			"authURL": []byte("u"), "domainName": []byte("d"), "tenantName": []byte("t"), "region": []byte("r"), "username": []byte("u")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "oss", Namespace: "ns"}, Data: map[string][]byte{"storageEndpoint": []byte("e"), "accessKeyID": []byte("a")}},
	).Build()
	missing, err := missingSecrets(context.Background(), secretReaders{digests: c, live: c}, []secretref.Reference{
		{Namespace: "ns", Name: "complete", Field: "a", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "ns", Name: "no-key", Field: "b", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "ns", Name: "absent", Field: "c"},
		{Namespace: "ns", Name: "swift-app-cred", Field: "d", Provider: "Swift", Required: backupsecret.Required("Swift")},
		{Namespace: "ns", Name: "swift-half", Field: "e", Provider: "Swift", Required: backupsecret.Required("openstack")},
		{Namespace: "ns", Name: "oss", Field: "f", Provider: "OSS", Required: backupsecret.RequiredForStore(&druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderAlicloud)})},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal([]string{
		`secret ns/no-key (b) has no data for key(s) "tls.key"`,
		`secret ns/absent (c) not found`,
		`secret ns/swift-half (e, provider Swift) has no data for key(s) ("username" and "password") or ("applicationCredentialID" and "applicationCredentialSecret") or ("username" and "applicationCredentialName" and "applicationCredentialSecret")`,
		`secret ns/oss (f, provider OSS) has no data for key(s) "accessKeySecret", "bucketName"`,
	}))
}

// countingReader counts the secrets read through it (the apiserver reads of druid).
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// The gate judges secrets on the cache's digests and asks the apiserver only about a problem the cache
// shows: a secret the cache has not seen yet, or not at its newest version, is found there and passes; a
// secret missing in both is reported; a secret present in the cache costs no request.
func TestSecretsGateConfirmsOnlyProblemsWithTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	complete := map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}
	digested := func(name string, data map[string][]byte) *corev1.Secret {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: data}
		transformed, err := SecretDigest(secret)
		g.Expect(err).NotTo(HaveOccurred())
		return transformed.(*corev1.Secret)
	}
	cache := fake.NewClientBuilder().WithObjects(
		digested("cached", complete),
		digested("stale", map[string][]byte{"tls.crt": []byte("c")}),
	).Build()
	apiserver := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cached", Namespace: "ns"}, Data: complete},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: "ns"}, Data: complete},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-cached-yet", Namespace: "ns"}, Data: complete},
	).Build()
	live := &countingReader{Reader: apiserver}
	tls := backupsecret.Keys("tls.crt", "tls.key")
	ref := func(name string) secretref.Reference {
		return secretref.Reference{Namespace: "ns", Name: name, Field: "f", Required: tls}
	}

	missing, err := missingSecrets(ctx, secretReaders{digests: cache, live: live}, []secretref.Reference{ref("cached")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(BeEmpty())
	g.Expect(live.gets).To(BeZero(), "a secret the cache shows complete is not read from the apiserver")

	missing, err = missingSecrets(ctx, secretReaders{digests: cache, live: live}, []secretref.Reference{ref("stale"), ref("not-cached-yet"), ref("absent")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal([]string{`secret ns/absent (f) not found`}))
	g.Expect(live.gets).To(Equal(3), "each problem the cache shows is confirmed with the apiserver")
}
