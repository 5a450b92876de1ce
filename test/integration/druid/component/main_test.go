// Package component_test runs druid's component operators against a real kube-apiserver (test/support/envtest):
// the objects they write are read back from the apiserver and compared with the wire reference
// (as upstream etcd-druid names them).
package component_test

import (
	"context"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/operators"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

// testImages stand in for druid's configured images.
var testImages = config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"}

// testLocalBackup is druid's configured limit for Local stores in these tests: the default directory and
// /srv/buckets.
var testLocalBackup = config.LocalBackup{AllowedHostPaths: []string{config.DefaultLocalBackupHostPath, "/srv/buckets"}}

// testBackupPortAccess is druid running in namespace garden with the default client namespaces.
var testBackupPortAccess = config.BackupPortAccess{DruidNamespace: "garden"}

// writeCounter counts the writes that reach the apiserver, so that idempotency is asserted on what druid
// sends and not only on what the apiserver kept.
type writeCounter struct{ writes atomic.Int64 }

func (w *writeCounter) client(c client.WithWatch) client.Client {
	count := func() { w.writes.Add(1) }
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, obj, opts...)
		},
	})
}

// newRegistry returns all operators on a client that counts its writes.
func newRegistry(t *testing.T) (component.Registry, *writeCounter) {
	t.Helper()
	watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: envtest.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	counter := &writeCounter{}
	return operators.New(component.Uncached(counter.client(watching)), operators.Options{Images: testImages, LocalBackup: testLocalBackup, BackupPortAccess: testBackupPortAccess}), counter
}

// createEtcd stores an Etcd named etcd-main in namespace (so that it has a UID for owner references) and
// returns a defaulted deep copy, as the controller would hand it to the operators.
func createEtcd(t *testing.T, namespace string, replicas int32, customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	t.Helper()
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: namespace},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main", "app": "etcd-statefulset"},
			Replicas: replicas,
		},
	}
	for _, c := range customize {
		c(etcd)
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), etcd)).To(Succeed())
	return defaulted(etcd)
}

// updateEtcd changes the stored Etcd and returns the new defaulted copy.
func updateEtcd(t *testing.T, etcd *druidv1alpha1.Etcd, change func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	t.Helper()
	stored := &druidv1alpha1.Etcd{}
	g := NewWithT(t)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(etcd), stored)).To(Succeed())
	change(stored)
	g.Expect(env.Client.Update(context.Background(), stored)).To(Succeed())
	return defaulted(stored)
}

// scaledIn is etcd asking for fewer members than it has. Upstream etcd-druid's CRD with CEL rules (the one
// installed for Kubernetes >= 1.29) refuses lowering spec.replicas other than to 0; its variant without CEL
// (older Kubernetes) and an Etcd stored before the rule accept it, and the component operators must then
// still take the members out one by one. The operators get the Etcd in memory, so the scale-in is given
// to them that way.
func scaledIn(etcd *druidv1alpha1.Etcd, replicas int32) *druidv1alpha1.Etcd {
	lower := etcd.DeepCopy()
	lower.Spec.Replicas = replicas
	return lower
}

func defaulted(etcd *druidv1alpha1.Etcd) *druidv1alpha1.Etcd {
	defaultedEtcd := etcd.DeepCopy()
	druidv1alpha1.SetDefaults(defaultedEtcd)
	return defaultedEtcd
}

func withPeerTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd-peer"}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-peer-server"},
	}}
}

func withClientTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd"}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"},
		ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client"},
	}
}

// expectManaged checks the reference's labels and the controller owner reference of a managed object.
func expectManaged(g Gomega, obj client.Object, etcd *druidv1alpha1.Etcd, componentName string) {
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "etcd-druid"), obj.GetName())
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/part-of", etcd.Name), obj.GetName())
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/component", componentName), obj.GetName())
	nameLabel := obj.GetName()
	if componentName == "etcd-role" || componentName == "etcd-role-binding" {
		nameLabel = "druid.gardener.cloud-etcd-" + etcd.Name // label values cannot contain the colons of the RBAC names
	}
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/name", nameLabel), obj.GetName())
	g.Expect(obj.GetOwnerReferences()).To(ConsistOf(metav1.OwnerReference{
		APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: etcd.Name, UID: etcd.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}), obj.GetName())
}

func get(t *testing.T, namespace, name string, obj client.Object) client.Object {
	t.Helper()
	NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, obj)).To(Succeed(), name)
	return obj
}
