package component

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestApplyManagedMetaAdoptsWithoutDropping(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns", UID: "new"}}
	upstream := metav1.OwnerReference{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: "etcd-main", UID: "new",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm"}
	controller := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "someone", UID: "d", Controller: ptr.To(true)}

	for _, tc := range []struct {
		name       string
		refs       []metav1.OwnerReference
		wantLen    int
		controller bool
	}{
		{"upstream druid's reference is replaced in place", []metav1.OwnerReference{other, upstream}, 2, true},
		{"a reference of a recreated Etcd is replaced", []metav1.OwnerReference{func() metav1.OwnerReference { r := upstream; r.UID = "old"; return r }()}, 1, true},
		{"added next to another owner", []metav1.OwnerReference{other}, 2, true},
		{"not the controller when someone else is", []metav1.OwnerReference{controller}, 2, false},
	} {
		obj := &metav1.ObjectMeta{Name: "etcd-main-client", Labels: map[string]string{"instance": "etcd-main", "name": "etcd"}, OwnerReferences: tc.refs}
		ApplyManagedMeta(obj, etcd, druidv1alpha1.ComponentClientService)
		if obj.Labels["instance"] != "etcd-main" || obj.Labels[druidv1alpha1.LabelManagedByKey] != druidv1alpha1.LabelManagedByValue {
			t.Errorf("%s: labels %v", tc.name, obj.Labels)
		}
		if len(obj.OwnerReferences) != tc.wantLen {
			t.Fatalf("%s: references %v", tc.name, obj.OwnerReferences)
		}
		var ours *metav1.OwnerReference
		for i := range obj.OwnerReferences {
			if obj.OwnerReferences[i].UID == types.UID("new") {
				ours = &obj.OwnerReferences[i]
			}
		}
		if ours == nil || *ours.Controller != tc.controller {
			t.Errorf("%s: druid's reference %+v, want controller %v", tc.name, ours, tc.controller)
		}
	}
}
