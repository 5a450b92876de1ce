package gardener_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

func TestWorkflowLocal(t *testing.T) { runWorkflow(t, "local", nil) }

func TestWorkflowS3OnVersitygw(t *testing.T) {
	srv := s3server.Start(t)
	runWorkflow(t, "s3", map[string][]byte{
		"accessKeyID":      []byte(srv.AccessKey),
		"secretAccessKey":  []byte(srv.SecretKey),
		"region":           []byte(srv.Region),
		"endpoint":         []byte(srv.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	})
}

// runWorkflow: BackupBucket → BackupEntry → etcd-backup (bucketName, exposed in the entry status) → Deploy
// writes the Etcd with it and the TLS secrets → a TLS secret disappears: Deploy with externally managed TLS
// secrets fails naming it, and druid holds the StatefulSet back with SecretsReady=False → the secret is back
// → druid creates the StatefulSet.
func runWorkflow(t *testing.T, providerType string, credentials map[string][]byte) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace, entryName := newShoot(t, providerType, credentials)

	// The extension wrote etcd-backup with bucketName and exposed it in the BackupEntry status.
	entry := &extensionsv1alpha1.BackupEntry{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: entryName}, entry)).To(Succeed())
		g.Expect(entry.Status.EtcdBackupSecretRef).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	ref := entry.Status.EtcdBackupSecretRef
	g.Expect(ref.Namespace).To(Equal(namespace))
	backupSecret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, backupSecret)).To(Succeed())
	g.Expect(backupSecret.Data).To(HaveKeyWithValue("bucketName", []byte(entry.Spec.BucketName)))

	// Deploy writes the Etcd with that secret and the TLS secrets it generated.
	values := etcd.Values{Role: etcd.RoleMain, WaitTimeout: timeout, WaitInterval: interval,
		BackupConfig: &etcd.BackupConfig{BackupEntryName: entryName}}
	g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())
	obj := getEtcd(g, namespace)
	g.Expect(obj.Spec.Backup.Store).NotTo(BeNil())
	g.Expect(*obj.Spec.Backup.Store.SecretRef).To(Equal(*ref))
	g.Expect(*obj.Spec.Backup.Store.Container).To(Equal(entry.Spec.BucketName))
	tls := obj.Spec.Etcd.ClientUrlTLS
	g.Expect(tls).NotTo(BeNil())
	g.Expect(tls.TLSCASecretRef.Name).To(Equal(etcd.CASecretName))
	g.Expect(tls.ServerTLSSecretRef.Name).To(Equal(etcd.ServerSecretName(etcd.RoleMain)))
	clientSecret := tls.ClientTLSSecretRef.Name
	g.Expect(clientSecret).NotTo(BeEmpty())

	// A TLS secret disappears. Deploy with TLS secrets owned elsewhere refuses, naming it, and writes nothing.
	g.Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clientSecret}})).To(Succeed())
	skipTLS := values
	skipTLS.TLS = etcd.ExistingTLS{Refs: etcd.DefaultTLSSecretRefs(etcd.RoleMain)}
	before := getEtcd(g, namespace).ResourceVersion
	err := etcd.New(env.Client, namespace, skipTLS).Deploy(ctx)
	var missing *etcd.MissingSecretError
	g.Expect(errors.As(err, &missing)).To(BeTrue(), "error %v", err)
	g.Expect(err.Error()).To(ContainSubstring(clientSecret))
	g.Expect(getEtcd(g, namespace).ResourceVersion).To(Equal(before))

	// Druid sees the Etcd asking for a reconcile while a referenced secret is missing: no StatefulSet.
	startDruid(t)
	g.Eventually(func(g Gomega) {
		c := druidv1alpha1.FindCondition(getEtcd(g, namespace).Status.Conditions, etcdcontroller.ConditionTypeSecretsReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring(clientSecret))
	}, timeout, interval).Should(Succeed())
	sts := &appsv1.StatefulSet{}
	stsKey := client.ObjectKey{Namespace: namespace, Name: obj.Name}
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, stsKey, sts))).To(BeTrue(), "druid created the StatefulSet although %s is missing", clientSecret)

	// The secret comes back (a Deploy that owns the TLS secrets re-issues it): druid creates the StatefulSet.
	g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, stsKey, sts) }, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := druidv1alpha1.FindCondition(getEtcd(g, namespace).Status.Conditions, etcdcontroller.ConditionTypeSecretsReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
	g.Expect(usesSecret(sts, ref.Name)).To(BeTrue(), "the StatefulSet does not use %s", ref.Name)
}

func getEtcd(g Gomega, namespace string) *druidv1alpha1.Etcd {
	obj := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: etcd.Name(etcd.RoleMain)}, obj)).To(Succeed())
	return obj
}

// usesSecret tells whether the pod template mounts the secret or reads it through env.
func usesSecret(sts *appsv1.StatefulSet, name string) bool {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == name {
			return true
		}
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name {
				return true
			}
		}
	}
	return false
}

// newShoot creates the shoot namespace, a BackupBucket with its secret and the shoot's BackupEntry, and
// removes them (entry first, it needs its secret for deletion) when the test ends.
func newShoot(t *testing.T, providerType string, credentials map[string][]byte) (namespace, entryName string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	namespace = "shoot--dev--" + rand.String(8)
	bucket := "bb-" + rand.String(8)
	entryName = namespace + "--" + string(uuid.NewUUID())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	secret := func(name string) corev1.SecretReference {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden"}, Data: credentials}
		g.Expect(env.Client.Create(ctx, s)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
		return corev1.SecretReference{Name: name, Namespace: "garden"}
	}
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucket},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region: "us-east-1", SecretRef: secret("bucket-" + bucket)},
	}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: entryName},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region: "us-east-1", BucketName: bucket, SecretRef: secret("entry-" + entryName)},
	}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	t.Cleanup(func() {
		for _, obj := range []client.Object{be, bb} {
			_ = env.Client.Delete(context.Background(), obj)
			NewWithT(t).Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
			}, timeout, interval).Should(BeTrue())
		}
		_ = env.Client.Delete(context.Background(), ns)
	})
	return namespace, entryName
}
