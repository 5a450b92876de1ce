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
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MemberPodHandler guards member identity: a pod that carries an Etcd's member labels is counted by the
// Etcd's PodDisruptionBudget, client Service and NetworkPolicy, so one extra Ready pod lets a 3-member PDB
// allow two evictions and receives client traffic. Member labels are druid's ManagedLabels
// (managed-by=etcd-druid, part-of=<etcd>) and the legacy selector of older etcd-druid releases
// (instance=<etcd>, name=etcd), which an adopted StatefulSet may keep and druid then selects the members
// with. Creating such a pod, or relabelling a pod into one, is allowed only to the pod controller users
// (kube-controller-manager; PodControllerUsers) for a pod whose controller is the Etcd's StatefulSet —
// checked by UID against the stored StatefulSet, so an owner reference of an earlier StatefulSet does not
// pass, and anyone else copying the owner reference does not pass either — and to the users the
// components webhook lets through (druid, exempt service accounts; any user while the Etcd has its
// protection disabled or is gone).
type MemberPodHandler struct {
	// Reader reads Etcds and StatefulSets; the manager's API reader, so that a StatefulSet created a moment
	// ago (whose first pods are being created) is found.
	Reader client.Reader
	// ReconcilerServiceAccount is druid's own user; ExemptServiceAccounts further users; both always allowed.
	ReconcilerServiceAccount string
	ExemptServiceAccounts    []string
	// PodControllerUsers are the users kube-controller-manager creates pods as (DefaultPodControllerUsers
	// unless configured); among them the StatefulSet controller's, which alone creates the StatefulSet's pods.
	PodControllerUsers []string
}

var _ admission.Handler = &MemberPodHandler{}

// memberClaim is one Etcd a pod's labels make it a member of, and the labels that do.
type memberClaim struct {
	etcd   string
	labels string
}

// Handle implements admission.Handler for CREATE and UPDATE of pods.
func (h *MemberPodHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("only creating and relabelling pods is judged")
	}
	pod, err := decodePodMeta(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	claims := memberClaims(pod.Labels)
	if req.Operation == admissionv1.Update {
		old, err := decodePodMeta(req.OldObject.Raw)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		claims = slices.DeleteFunc(claims, func(c memberClaim) bool { return slices.Contains(memberClaims(old.Labels), c) })
	}
	if len(claims) == 0 {
		return admission.Allowed("the pod claims no Etcd's member labels it did not carry before")
	}
	user := req.UserInfo.Username
	if user == h.ReconcilerServiceAccount || slices.Contains(h.ExemptServiceAccounts, user) {
		return admission.Allowed("exempt user")
	}
	for _, claim := range claims {
		if resp := h.judge(ctx, req, pod, claim); !resp.Allowed {
			return resp
		}
	}
	return admission.Allowed("the pod is a member only of Etcds whose StatefulSet it belongs to, or whose protection is off")
}

// judge decides one claim: allowed when the Etcd does not exist, its protection is off, or a pod
// controller user creates a pod of its StatefulSet.
func (h *MemberPodHandler) judge(ctx context.Context, req admission.Request, pod *metav1.ObjectMeta, claim memberClaim) admission.Response {
	etcd := &druidv1alpha1.Etcd{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: claim.etcd}, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			return admission.Allowed("no such Etcd")
		}
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if _, disabled := etcd.Annotations[druidv1alpha1.DisableEtcdComponentProtectionAnnotation]; disabled || etcd.DeletionTimestamp != nil {
		return admission.Allowed("the Etcd's component protection is off")
	}
	user := req.UserInfo.Username
	if slices.Contains(h.PodControllerUsers, user) {
		owned, err := h.ownedByStatefulSet(ctx, pod, etcd)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if owned {
			return admission.Allowed("the StatefulSet controller creates a pod of the Etcd's StatefulSet")
		}
	}
	logf.FromContext(ctx).Info("Denied a pod that claims to be an Etcd member", "namespace", req.Namespace, "pod", pod.Name,
		"generateName", pod.GenerateName, "operation", req.Operation, "user", user, "etcd", claim.etcd, "labels", claim.labels)
	return admission.Denied(fmt.Sprintf(
		"metadata.labels: %s make a pod a member of Etcd %s/%s (its PodDisruptionBudget, client Service and "+
			"NetworkPolicy count it); only pods of the StatefulSet %s may carry them, and %s may not give them to this pod; "+
			"to allow it anyway, annotate the Etcd with %s",
		claim.labels, req.Namespace, claim.etcd, druidv1alpha1.StatefulSetName(etcd), user, druidv1alpha1.DisableEtcdComponentProtectionAnnotation))
}

// ownedByStatefulSet tells whether the pod's controller is the Etcd's StatefulSet as stored now (its UID).
func (h *MemberPodHandler) ownedByStatefulSet(ctx context.Context, pod *metav1.ObjectMeta, etcd *druidv1alpha1.Etcd) (bool, error) {
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil || owner.Kind != "StatefulSet" || owner.APIVersion != appsv1.SchemeGroupVersion.String() || owner.Name != druidv1alpha1.StatefulSetName(etcd) {
		return false, nil
	}
	sts := &appsv1.StatefulSet{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return sts.UID == owner.UID, nil
}

// memberClaims are the Etcds whose member selector the labels match: druid's (managed-by=etcd-druid,
// part-of=<etcd>) and the legacy one (instance=<etcd>, name=etcd).
func memberClaims(labels map[string]string) []memberClaim {
	var claims []memberClaim
	if etcd := labels[druidv1alpha1.LabelPartOfKey]; etcd != "" && labels[druidv1alpha1.LabelManagedByKey] == druidv1alpha1.LabelManagedByValue {
		claims = append(claims, memberClaim{etcd: etcd, labels: fmt.Sprintf("%s=%s together with %s=%s",
			druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey, etcd)})
	}
	if etcd := labels[druidv1alpha1.LabelLegacyInstanceKey]; etcd != "" && labels[druidv1alpha1.LabelLegacyNameKey] == druidv1alpha1.LabelLegacyNameValue {
		claims = append(claims, memberClaim{etcd: etcd, labels: fmt.Sprintf("%s=%s together with %s=%s (the legacy member selector)",
			druidv1alpha1.LabelLegacyNameKey, druidv1alpha1.LabelLegacyNameValue, druidv1alpha1.LabelLegacyInstanceKey, etcd)})
	}
	return claims
}

func decodePodMeta(raw []byte) (*metav1.ObjectMeta, error) {
	var pod struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &pod); err != nil {
		return nil, fmt.Errorf("decoding the pod's metadata: %w", err)
	}
	return &pod.Metadata, nil
}
