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
	missing, err := newSecretChecks().missing(context.Background(), c, c, []secretref.Reference{
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

// A secret whose resourceVersion druid's metadata cache still shows as checked is not read again: a
// spec reconcile of an unchanged Etcd costs no secret read. A changed secret (new resourceVersion) is
// read and judged anew, so a removed key is still found.
func TestSecretChecksReadEachSecretVersionOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "server", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	reader := &countingReader{Reader: c}
	checks := newSecretChecks()
	refs := []secretref.Reference{{Namespace: "ns", Name: "server", Field: "f", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "ns", Name: "absent", Field: "g"}}

	for range 3 {
		missing, err := checks.missing(ctx, c, reader, refs)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(missing).To(Equal([]string{`secret ns/absent (g) not found`}))
	}
	g.Expect(reader.gets).To(Equal(1+3), "the existing secret read once, the absent one each time")

	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	delete(secret.Data, "tls.key")
	g.Expect(c.Update(ctx, secret)).To(Succeed())
	missing, err := checks.missing(ctx, c, reader, refs[:1])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal([]string{`secret ns/server (f) has no data for key(s) "tls.key"`}))
	g.Expect(reader.gets).To(Equal(5), "the changed secret read again")
}
