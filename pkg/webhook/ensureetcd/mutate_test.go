package ensureetcd

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestMutate(t *testing.T) {
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	etcd := func(class *string, capacity *resource.Quantity) *druidv1alpha1.Etcd {
		e := &druidv1alpha1.Etcd{}
		e.Spec.StorageClass, e.Spec.StorageCapacity = class, capacity
		return e
	}
	defaults := RoleDefaults{StorageClassName: "fast", StorageCapacity: q("25Gi")}
	tests := []struct {
		name         string
		obj, old     *druidv1alpha1.Etcd
		defaults     RoleDefaults
		wantClass    *string
		wantCapacity *resource.Quantity
	}{
		{"create: class and capacity set", etcd(nil, nil), nil, defaults, ptr.To("fast"), q("25Gi")},
		{"create: provider class wins over the writer's", etcd(ptr.To("standard"), nil), nil, defaults, ptr.To("fast"), q("25Gi")},
		{"create: larger requested capacity kept", etcd(nil, q("40Gi")), nil, defaults, ptr.To("fast"), q("40Gi")},
		{"create: smaller requested capacity raised", etcd(nil, q("10Gi")), nil, defaults, ptr.To("fast"), q("25Gi")},
		{"create: no defaults, nothing changes", etcd(nil, q("10Gi")), nil, RoleDefaults{}, nil, q("10Gi")},
		{"update: class not set again", etcd(nil, nil), etcd(nil, q("25Gi")), defaults, nil, q("25Gi")},
		{"update: stored class carried over when left empty", etcd(nil, nil), etcd(ptr.To("old"), q("25Gi")), defaults, ptr.To("old"), q("25Gi")},
		{"update: explicit class left to the apiserver", etcd(ptr.To("other"), nil), etcd(ptr.To("old"), nil), defaults, ptr.To("other"), q("25Gi")},
		{"update: stored larger capacity never shrinks", etcd(nil, q("25Gi")), etcd(nil, q("50Gi")), defaults, nil, q("50Gi")},
		{"update: growth above everything kept", etcd(nil, q("60Gi")), etcd(nil, q("50Gi")), defaults, nil, q("60Gi")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Mutate(tt.obj, tt.old, tt.defaults)
			if got := tt.obj.Spec.StorageClass; (got == nil) != (tt.wantClass == nil) || (got != nil && *got != *tt.wantClass) {
				t.Errorf("storage class = %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.wantClass, "<nil>"))
			}
			if got := tt.obj.Spec.StorageCapacity; (got == nil) != (tt.wantCapacity == nil) || (got != nil && got.Cmp(*tt.wantCapacity) != 0) {
				t.Errorf("storage capacity = %v, want %v", got, tt.wantCapacity)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	cfg := Config{Main: RoleDefaults{StorageClassName: "m"}, Events: RoleDefaults{StorageClassName: "e"}}
	if d, ok := cfg.For("etcd-main"); !ok || d.StorageClassName != "m" {
		t.Errorf("etcd-main: %v %v", d, ok)
	}
	if d, ok := cfg.For("etcd-events"); !ok || d.StorageClassName != "e" {
		t.Errorf("etcd-events: %v %v", d, ok)
	}
	if _, ok := cfg.For("etcd-other"); ok {
		t.Error("etcd-other handled")
	}
	if err := (Config{Main: RoleDefaults{StorageCapacity: ptr.To(resource.MustParse("0"))}}).Validate(); err == nil {
		t.Error("zero capacity accepted")
	}
}
