package protection

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// DefaultGarbageCollectorUsers are the users kube-controller-manager's garbage collector runs as: its
// service account with --use-service-account-credentials, else kube-controller-manager's own name. A seed
// whose kube-controller-manager authenticates under another name configures its own (druid's
// --garbage-collector-users): otherwise the collector may not finish druid's recreation of a StatefulSet.
var DefaultGarbageCollectorUsers = []string{
	"system:serviceaccount:kube-system:generic-garbage-collector",
	"system:kube-controller-manager",
}

// ValidateGarbageCollectorUsers refuses an empty list (no one could finish an orphaning deletion, and every
// recreation of a StatefulSet would hang) and empty names.
func ValidateGarbageCollectorUsers(users []string) error {
	if len(users) == 0 {
		return fmt.Errorf("garbage collector users: none named; no StatefulSet druid recreates could finish its deletion")
	}
	for _, u := range users {
		if strings.TrimSpace(u) == "" {
			return fmt.Errorf("garbage collector users: %q is no user name", u)
		}
	}
	return nil
}

// finalizersTakenOffAdmittedDeletion tells whether an UPDATE does nothing but take finalizers off an object
// whose deletion has begun, and which. That deletion was admitted already (by druid, an exempt user, or
// while the protection was off), and finishing it must not depend on the name the finisher runs under:
// druid recreates a StatefulSet by deleting it with propagationPolicy Orphan (its pods stay), and the
// apiserver leaves that deletion to the garbage collector, which removes the "orphan" finalizer
// (DefaultGarbageCollectorUsers). The "orphan" finalizer itself is the exception (Handler.Handle): only
// the collector may take it off. Any other change rides along only at the price of a refusal: the
// objects are compared without finalizers, resourceVersion and managedFields.
func finalizersTakenOffAdmittedDeletion(req admission.Request) ([]string, bool) {
	if req.Operation != admissionv1.Update || req.SubResource != "" {
		return nil, false
	}
	var before, after map[string]any
	if json.Unmarshal(req.OldObject.Raw, &before) != nil || json.Unmarshal(req.Object.Raw, &after) != nil {
		return nil, false
	}
	beforeMeta, ok1 := before["metadata"].(map[string]any)
	afterMeta, ok2 := after["metadata"].(map[string]any)
	if !ok1 || !ok2 || beforeMeta["deletionTimestamp"] == nil {
		return nil, false
	}
	beforeFinalizers, afterFinalizers := stringList(beforeMeta["finalizers"]), stringList(afterMeta["finalizers"])
	if len(afterFinalizers) >= len(beforeFinalizers) {
		return nil, false
	}
	for _, f := range afterFinalizers {
		if !slices.Contains(beforeFinalizers, f) {
			return nil, false
		}
	}
	for _, meta := range []map[string]any{beforeMeta, afterMeta} {
		delete(meta, "finalizers")
		delete(meta, "resourceVersion")
		delete(meta, "managedFields")
	}
	if !equality.Semantic.DeepEqual(before, after) {
		return nil, false
	}
	var removed []string
	for _, f := range beforeFinalizers {
		if !slices.Contains(afterFinalizers, f) {
			removed = append(removed, f)
		}
	}
	return removed, true
}

func stringList(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, item := range items {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
