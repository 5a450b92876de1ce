package etcd

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

func TestMissingSecrets(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "complete", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "no-key", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": nil}},
	).Build()
	missing, err := missingSecrets(context.Background(), c, []secretref.Reference{
		{Namespace: "ns", Name: "complete", Field: "a", Keys: []string{"tls.crt", "tls.key"}},
		{Namespace: "ns", Name: "no-key", Field: "b", Keys: []string{"tls.crt", "tls.key"}},
		{Namespace: "ns", Name: "absent", Field: "c"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal([]string{
		`secret ns/no-key (b) has no data for key(s) "tls.key"`,
		`secret ns/absent (c) not found`,
	}))
}
