package ensureetcd_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// etcdNamed is example/etcd.yaml under a new name in a fresh namespace, without storage class and capacity,
// as Gardener's cloud-agnostic Deploy writes it.
func etcdNamed(t *testing.T, name string) *druidv1alpha1.Etcd {
	t.Helper()
	root, err := envtest.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "example", "etcd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	etcd := &druidv1alpha1.Etcd{}
	if err := yaml.UnmarshalStrict(data, etcd); err != nil {
		t.Fatal(err)
	}
	etcd.Name = name
	etcd.Namespace = env.CreateNamespace(t)
	etcd.Spec.StorageClass, etcd.Spec.StorageCapacity = nil, nil
	return etcd
}

func get(t *testing.T, etcd *druidv1alpha1.Etcd) *druidv1alpha1.Etcd {
	t.Helper()
	got := &druidv1alpha1.Etcd{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(etcd), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDefaultsOnCreatePerRole: each role gets its own provider defaults when the Etcd is created.
func TestDefaultsOnCreatePerRole(t *testing.T) {
	g := NewWithT(t)
	for name, want := range map[string]struct{ class, capacity string }{
		"etcd-main":   {"provider-fast", "25Gi"},
		"etcd-events": {"provider-standard", "10Gi"},
	} {
		etcd := etcdNamed(t, name)
		g.Expect(env.Client.Create(context.Background(), etcd)).To(Succeed())
		stored := get(t, etcd)
		g.Expect(stored.Spec.StorageClass).To(Equal(ptr.To(want.class)), name)
		g.Expect(stored.Spec.StorageCapacity.Cmp(resource.MustParse(want.capacity))).To(BeZero(), "%s capacity %s", name, stored.Spec.StorageCapacity)
	}
}

// TestOtherEtcdsUntouched: the match condition keeps the webhook away from Etcds Gardener does not own.
func TestOtherEtcdsUntouched(t *testing.T) {
	g := NewWithT(t)
	etcd := etcdNamed(t, "etcd-custom")
	g.Expect(env.Client.Create(context.Background(), etcd)).To(Succeed())
	stored := get(t, etcd)
	g.Expect(stored.Spec.StorageClass).To(BeNil())
	g.Expect(stored.Spec.StorageCapacity).To(BeNil())
}

// TestUpdateKeepsClassAndNeverShrinks: a later Deploy that writes no class and a smaller capacity neither
// trips the immutable class nor shrinks the volumes; a larger capacity set on creation is kept.
func TestUpdateKeepsClassAndNeverShrinks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := etcdNamed(t, "etcd-main")
	etcd.Spec.StorageCapacity = ptr.To(resource.MustParse("40Gi"))
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	stored := get(t, etcd)
	g.Expect(stored.Spec.StorageCapacity.Cmp(resource.MustParse("40Gi"))).To(BeZero(), "larger requested capacity kept on create")

	// A writer that knows neither the class nor the size (e.g. a replace with Gardener's own values).
	stored.Spec.StorageClass = nil
	stored.Spec.StorageCapacity = ptr.To(resource.MustParse("1Gi"))
	stored.Spec.Replicas = 3
	g.Expect(env.Client.Update(ctx, stored)).To(Succeed())
	updated := get(t, etcd)
	g.Expect(updated.Spec.Replicas).To(Equal(int32(3)), "the update itself went through")
	g.Expect(updated.Spec.StorageClass).To(Equal(ptr.To("provider-fast")))
	g.Expect(updated.Spec.StorageCapacity.Cmp(resource.MustParse("40Gi"))).To(BeZero(), "capacity %s", updated.Spec.StorageCapacity)
}
