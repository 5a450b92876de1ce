package ensureetcd

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// An Etcd that already carries the defaults differs from its re-marshalled self only by nulls that upstream's
// API types write for unset fields (spec.selector, spec.labels). Those patches are dropped, and a response
// without patches must not name a patch type: the apiserver refuses such a response ("webhook returned
// response.patchType but not response.patch"), which with failurePolicy Fail refuses the Etcd.
func TestHandleWithNothingToPatchNamesNoPatchType(t *testing.T) {
	raw := []byte(`{"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd","metadata":{"name":"etcd-main","namespace":"shoot"},` +
		`"spec":{"replicas":1,"storageClass":"fast","storageCapacity":"25Gi","etcd":{},"backup":{},"schedulingConstraints":{},"sharedConfig":{}},"status":{}}`)
	h := &Handler{Config: Config{Main: RoleDefaults{StorageClassName: "fast", StorageCapacity: ptr.To(resource.MustParse("25Gi"))}}}
	resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Name: "etcd-main", Namespace: "shoot", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
	}})
	if !resp.Allowed {
		t.Fatalf("not allowed: %v", resp.Result)
	}
	if len(resp.Patches) != 0 || resp.PatchType != nil {
		t.Fatalf("patches %v with patch type %v, want neither", resp.Patches, ptr.Deref(resp.PatchType, ""))
	}
}
