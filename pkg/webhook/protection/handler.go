// Package protection is druid's component protection webhook: objects that druid manages for an Etcd
// (labelled app.kubernetes.io/managed-by=etcd-druid) may be changed or deleted only by druid itself, by the
// etcd pods' service account renewing their leases, and by configured exempt service accounts — unless the
// parent Etcd carries druid.gardener.cloud/disable-etcd-component-protection. A stray `kubectl edit` on the
// StatefulSet or a deleted member lease would otherwise silently break a running cluster.
package protection

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Handler decides whether a change to a druid-managed object is allowed.
type Handler struct {
	// Reader reads Etcds and StatefulSets; use the manager's API reader so decisions never rest on a stale
	// cache.
	Reader client.Reader
	// ReconcilerServiceAccount is druid's own user (system:serviceaccount:<ns>:<name>): always allowed.
	ReconcilerServiceAccount string
	// ExemptServiceAccounts are further users that are always allowed (e.g. a recovery tool).
	ExemptServiceAccounts []string
}

var _ admission.Handler = &Handler{}

// Handle implements admission.Handler.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	log := logf.FromContext(ctx).WithValues("resource", req.Resource.Resource, "subResource", req.SubResource,
		"namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "user", req.UserInfo.Username)

	meta, err := h.objectMeta(ctx, req)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Allowed("the object is gone")
		}
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if meta.Labels[druidv1alpha1.LabelManagedByKey] != druidv1alpha1.LabelManagedByValue {
		return admission.Allowed("not managed by etcd-druid")
	}
	etcdName := meta.Labels[druidv1alpha1.LabelPartOfKey]
	if etcdName == "" {
		return admission.Allowed("no parent Etcd")
	}

	user := req.UserInfo.Username
	if user == h.ReconcilerServiceAccount || slices.Contains(h.ExemptServiceAccounts, user) {
		return admission.Allowed("exempt user")
	}
	if req.Kind.Kind == "Lease" && req.Operation == admissionv1.Update &&
		user == serviceaccount.MakeUsername(req.Namespace, etcdName) {
		return admission.Allowed("the etcd members renew their own leases")
	}

	etcd := &druidv1alpha1.Etcd{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: etcdName}, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Allowed("the parent Etcd is gone")
		}
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if etcd.DeletionTimestamp != nil {
		return admission.Allowed("the parent Etcd is being deleted")
	}
	if _, disabled := etcd.Annotations[druidv1alpha1.DisableEtcdComponentProtectionAnnotation]; disabled {
		return admission.Allowed("component protection is disabled on the parent Etcd")
	}

	log.Info("Denied a change to a druid-managed object")
	return admission.Denied(fmt.Sprintf(
		"%s %s/%s is managed by etcd-druid for Etcd %s and may not be changed or deleted by %s; "+
			"to change it anyway, annotate the Etcd with %s",
		describe(req), req.Namespace, req.Name, etcdName, user, druidv1alpha1.DisableEtcdComponentProtectionAnnotation))
}

// objectMeta returns the metadata that decides: the old object for deletions, the new one for updates, and
// the StatefulSet itself for its scale subresource (a Scale carries no labels).
func (h *Handler) objectMeta(ctx context.Context, req admission.Request) (metav1.ObjectMeta, error) {
	if req.SubResource == "scale" {
		sts := &appsv1.StatefulSet{}
		err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, sts)
		return sts.ObjectMeta, err
	}
	raw := req.Object.Raw
	if req.Operation == admissionv1.Delete || len(raw) == 0 {
		raw = req.OldObject.Raw
	}
	var object struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &object); err != nil {
		return metav1.ObjectMeta{}, fmt.Errorf("decoding the object's metadata: %w", err)
	}
	return object.Metadata, nil
}

func describe(req admission.Request) string {
	if req.SubResource != "" {
		return req.Kind.Kind + " (" + req.Resource.Resource + "/" + req.SubResource + ")"
	}
	return req.Kind.Kind
}
