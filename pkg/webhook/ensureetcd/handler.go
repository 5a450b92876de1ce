package ensureetcd

import (
	"context"
	"encoding/json"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Handler answers admission requests for Etcds with a JSON patch that applies Config.
type Handler struct {
	Config Config
}

var _ admission.Handler = &Handler{}

// Handle implements admission.Handler. Etcds with other names and operations other than create and update
// pass unchanged: the webhook must never block what it does not own.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	defaults, ok := h.Config.For(req.Name)
	if !ok || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("not an etcd the extension defaults")
	}
	etcd := &druidv1alpha1.Etcd{}
	if err := json.Unmarshal(req.Object.Raw, etcd); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *druidv1alpha1.Etcd
	if req.Operation == admissionv1.Update {
		old = &druidv1alpha1.Etcd{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	Mutate(etcd, old, defaults)
	mutated, err := json.Marshal(etcd)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, mutated)
	resp.Patches = withoutNullAdds(resp.Patches)
	if len(resp.Patches) == 0 {
		// The apiserver refuses a patch type without a patch.
		resp.PatchType = nil
		return resp
	}
	logf.FromContext(ctx).V(1).Info("Applied provider defaults", "etcd", req.Namespace+"/"+req.Name, "operation", req.Operation)
	return resp
}

// withoutNullAdds drops patches that add a null: upstream's API types marshal some unset fields as null
// (spec.selector, spec.labels carry no omitempty), which the request omitted and upstream's CRD refuses as
// "must be of type object" once a webhook patch puts it in.
func withoutNullAdds(patches []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	out := patches[:0]
	for _, p := range patches {
		if p.Operation == "add" && p.Value == nil {
			continue
		}
		out = append(out, p)
	}
	return out
}
