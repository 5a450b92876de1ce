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
	"strings"

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
	// GarbageCollectorUsers are the users the garbage collector runs as (DefaultGarbageCollectorUsers): the
	// only ones besides druid and the exempt users that may take the "orphan" finalizer off.
	GarbageCollectorUsers []string
}

var _ admission.Handler = &Handler{}

// Handle implements admission.Handler. On UPDATE it judges the object before and after the change, so that
// relabelling an object out of druid's hands (and then deleting or scaling it) is refused like the change
// itself.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	log := logf.FromContext(ctx).WithValues("resource", req.Resource.Resource, "subResource", req.SubResource,
		"namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "user", req.UserInfo.Username)

	metas, err := h.objectMetas(ctx, req)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Allowed("the object is gone")
		}
		return admission.Errored(http.StatusInternalServerError, err)
	}
	etcdNames := parentEtcds(metas)
	if len(etcdNames) == 0 {
		return admission.Allowed("not managed by etcd-druid for an Etcd")
	}
	if labelsOnlyGuarded(req) && !labelsRemovedOrChanged(metas) {
		return admission.Allowed("only label changes of pods and PVCs are guarded")
	}

	user := req.UserInfo.Username
	if user == h.ReconcilerServiceAccount || slices.Contains(h.ExemptServiceAccounts, user) {
		return admission.Allowed("exempt user")
	}
	why := fmt.Sprintf("may not be changed or deleted by %s", user)
	if removed, ok := finalizersTakenOffAdmittedDeletion(req); ok {
		// Taken off before the garbage collector orphaned the dependents, the "orphan" finalizer would
		// turn druid's recreation of a StatefulSet into a cascading deletion of its pods.
		if !slices.Contains(removed, metav1.FinalizerOrphanDependents) || slices.Contains(h.GarbageCollectorUsers, user) {
			return admission.Allowed("only finalizers taken off an object whose deletion was admitted")
		}
		why = fmt.Sprintf("is being deleted with its dependents orphaned: only the garbage collector (%s) takes the %q finalizer off, once it orphaned them, not %s; taken off earlier, the dependents (member pods) would be deleted with it",
			strings.Join(h.GarbageCollectorUsers, ", "), metav1.FinalizerOrphanDependents, user)
	}
	if req.Kind.Kind == "Lease" && req.Operation == admissionv1.Update && len(etcdNames) == 1 &&
		user == serviceaccount.MakeUsername(req.Namespace, etcdNames[0]) && !labelsRemovedOrChanged(metas) && !labelsAdded(metas) {
		return admission.Allowed("the etcd members renew their own leases")
	}

	for _, etcdName := range etcdNames {
		protected, err := h.protects(ctx, req.Namespace, etcdName)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if !protected {
			continue
		}
		log.Info("Denied a change to a druid-managed object")
		return admission.Denied(fmt.Sprintf(
			"%s %s/%s is managed by etcd-druid for Etcd %s and %s; "+
				"to change it anyway, annotate the Etcd with %s",
			describe(req), req.Namespace, req.Name, etcdName, why, druidv1alpha1.DisableEtcdComponentProtectionAnnotation))
	}
	return admission.Allowed("no parent Etcd protects the object")
}

// protects tells whether the Etcd exists, is not being deleted and has its component protection on.
func (h *Handler) protects(ctx context.Context, namespace, name string) (bool, error) {
	etcd := &druidv1alpha1.Etcd{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // the parent Etcd is gone: its leftovers can be cleaned up
		}
		return false, err
	}
	if etcd.DeletionTimestamp != nil {
		return false, nil
	}
	_, disabled := etcd.Annotations[druidv1alpha1.DisableEtcdComponentProtectionAnnotation]
	return !disabled, nil
}

// objectMetas returns the metadata that decides: the old object for deletions, the old and the new one for
// updates (old first), and the StatefulSet itself for its scale subresource (a Scale carries no labels).
func (h *Handler) objectMetas(ctx context.Context, req admission.Request) ([]metav1.ObjectMeta, error) {
	if req.SubResource == "scale" {
		sts := &appsv1.StatefulSet{}
		err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, sts)
		return []metav1.ObjectMeta{sts.ObjectMeta}, err
	}
	var raws [][]byte
	switch req.Operation {
	case admissionv1.Delete:
		raws = [][]byte{req.OldObject.Raw}
	case admissionv1.Update:
		raws = [][]byte{req.OldObject.Raw, req.Object.Raw}
	default:
		raws = [][]byte{req.Object.Raw}
	}
	var metas []metav1.ObjectMeta
	for _, raw := range raws {
		if len(raw) == 0 {
			continue
		}
		var object struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &object); err != nil {
			return nil, fmt.Errorf("decoding the object's metadata: %w", err)
		}
		metas = append(metas, object.Metadata)
	}
	return metas, nil
}

// parentEtcds are the distinct Etcds that the objects in metas belong to as druid-managed components.
func parentEtcds(metas []metav1.ObjectMeta) []string {
	var names []string
	for _, meta := range metas {
		if meta.Labels[druidv1alpha1.LabelManagedByKey] != druidv1alpha1.LabelManagedByValue {
			continue
		}
		if name := meta.Labels[druidv1alpha1.LabelPartOfKey]; name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// labelsOnlyGuarded: on pods and PVCs only the labels are guarded on UPDATE; everything else about them is
// kube-controller-manager's and the kubelet's business (see OnlyLabelChangesOfPodsAndPVCsCondition).
func labelsOnlyGuarded(req admission.Request) bool {
	return req.Operation == admissionv1.Update && req.SubResource == "" &&
		(req.Kind.Kind == "Pod" || req.Kind.Kind == "PersistentVolumeClaim")
}

// labelsRemovedOrChanged tells whether an update (metas = old, new) removes a label or changes its value.
func labelsRemovedOrChanged(metas []metav1.ObjectMeta) bool {
	if len(metas) != 2 {
		return false
	}
	for key, value := range metas[0].Labels {
		if newValue, ok := metas[1].Labels[key]; !ok || newValue != value {
			return true
		}
	}
	return false
}

// labelsAdded tells whether an update (metas = old, new) adds a label.
func labelsAdded(metas []metav1.ObjectMeta) bool {
	return len(metas) == 2 && len(metas[1].Labels) > len(metas[0].Labels)
}

func describe(req admission.Request) string {
	if req.SubResource != "" {
		return req.Kind.Kind + " (" + req.Resource.Resource + "/" + req.SubResource + ")"
	}
	return req.Kind.Kind
}
