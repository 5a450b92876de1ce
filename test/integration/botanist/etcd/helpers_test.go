package etcd_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

// shoot is a control-plane namespace whose BackupEntry (local provider) is being reconciled by the extension.
type shoot struct {
	namespace string
	bucket    string
	entry     string
}

// newShoot creates what the shoot flow creates before the etcds: the namespace, a local BackupBucket and the
// shoot's BackupEntry. It does not wait for the entry: Deploy does.
func newShoot(t *testing.T) shoot { return newShootWith(t, "local", nil) }

// newShootWith is newShoot with a provider type and the credentials of the bucket and entry secrets.
func newShootWith(t *testing.T, providerType string, credentials map[string][]byte) shoot {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	s := shoot{namespace: "shoot--dev--" + rand.String(8), bucket: "bb-" + rand.String(8)}
	s.entry = s.namespace + "--" + string(uuid.NewUUID())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.namespace}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())

	bucketSecret := createGardenSecret(t, "bucket-"+s.bucket, credentials)
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: s.bucket},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "us-east-1",
			SecretRef:   corev1.SecretReference{Name: bucketSecret, Namespace: "garden"},
		},
	}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	entrySecret := createGardenSecret(t, "entry-"+s.entry, credentials)
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: s.entry},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "us-east-1",
			BucketName:  s.bucket,
			SecretRef:   corev1.SecretReference{Name: entrySecret, Namespace: "garden"},
		},
	}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	// The entry's deletion needs its secret, so it must be gone before the secrets are removed.
	t.Cleanup(func() {
		deleteAndWaitGone(t, be)
		deleteAndWaitGone(t, bb)
		_ = env.Client.Delete(ctx, ns)
	})
	return s
}

func createGardenSecret(t *testing.T, name string, data map[string][]byte) string {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden"}, Data: data}
	NewWithT(t).Expect(env.Client.Create(context.Background(), secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secret) })
	return name
}

// values are component values with waits short enough for tests.
func values(role string) etcd.Values {
	return etcd.Values{Role: role, WaitTimeout: timeout, WaitInterval: interval}
}

// mainValues are the values of etcd-main backed up to the shoot's entry.
func (s shoot) mainValues() etcd.Values {
	v := values(etcd.RoleMain)
	v.BackupConfig = &etcd.BackupConfig{BackupEntryName: s.entry}
	return v
}

func getEtcd(g Gomega, namespace, name string) *druidv1alpha1.Etcd {
	obj := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, obj)).To(Succeed())
	return obj
}

func getSecret(g Gomega, namespace, name string) *corev1.Secret {
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, secret)).To(Succeed())
	return secret
}

func getEntry(g Gomega, name string) *extensionsv1alpha1.BackupEntry {
	be := &extensionsv1alpha1.BackupEntry{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, be)).To(Succeed())
	return be
}

// fixedClock is a clock the test moves by hand, to tell Deploys apart by their timestamp annotation.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// deleteAndWaitGone deletes obj and waits until its controller released it.
func deleteAndWaitGone(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, obj))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}, timeout, interval).Should(BeTrue(), "%s still exists", obj.GetName())
}

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

func secretExists(namespace, name string) bool {
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Secret{})
	return !apierrors.IsNotFound(err)
}
