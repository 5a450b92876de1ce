package etcdops

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Switch is one of the annotations that steer druid by being present: druid reads only the key, so the
// value is free and carries the operator's reason for whoever looks next.
type Switch struct {
	// Annotation is the key.
	Annotation string
	// Set and Unset describe the two states in words, for messages ("spec reconcile suspended").
	Set, Unset string
}

// The switches an operator flips by hand (upstream etcd-druid's keys).
var (
	// SuspendSpecReconcile stops druid's spec reconciles of the Etcd (the status is still updated), e.g.
	// while an operator repairs a member by hand.
	SuspendSpecReconcile = Switch{
		Annotation: druidv1alpha1.SuspendEtcdSpecReconcileAnnotation,
		Set:        "spec reconcile suspended", Unset: "spec reconcile resumed",
	}
	// DisableComponentProtection lets changes to the Etcd's druid-managed objects (StatefulSet, leases,
	// services, ...) through the component protection webhook.
	DisableComponentProtection = Switch{
		Annotation: druidv1alpha1.DisableEtcdComponentProtectionAnnotation,
		Set:        "component protection disabled", Unset: "component protection enabled",
	}
)

// Change is what SetSwitch or UnsetSwitch found and did.
type Change struct {
	// Before is the annotation's value before the call, nil when it was absent.
	Before *string
	// Changed is false when the Etcd already was in the asked state (with the same reason).
	Changed bool
}

// SetSwitch sets the switch's annotation on the Etcd with reason as its value. The reason is required: an
// Etcd left suspended or unprotected must say why.
func SetSwitch(ctx context.Context, c client.Client, key types.NamespacedName, s Switch, reason string) (Change, error) {
	if reason == "" {
		return Change{}, fmt.Errorf("a reason is required for %s (it becomes the value of %s)", s.Set, s.Annotation)
	}
	return patchSwitch(ctx, c, key, s, &reason)
}

// UnsetSwitch removes the switch's annotation from the Etcd.
func UnsetSwitch(ctx context.Context, c client.Client, key types.NamespacedName, s Switch) (Change, error) {
	return patchSwitch(ctx, c, key, s, nil)
}

// patchSwitch writes the annotation with a JSON merge patch that touches nothing else (null removes it),
// so it needs only patch on etcds and never conflicts with druid's writes.
func patchSwitch(ctx context.Context, c client.Client, key types.NamespacedName, s Switch, value *string) (Change, error) {
	etcd, err := GetEtcd(ctx, c, key)
	if err != nil {
		return Change{}, err
	}
	change := Change{Before: annotation(etcd, s.Annotation)}
	if (value == nil && change.Before == nil) || (value != nil && change.Before != nil && *value == *change.Before) {
		return change, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]*string{s.Annotation: value}}})
	if err != nil {
		return Change{}, err
	}
	if err := c.Patch(ctx, etcd, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return Change{}, fmt.Errorf("annotating Etcd %s in %s (%s): %w", key.Name, key.Namespace, s.Annotation, err)
	}
	change.Changed = true
	return change, nil
}

// GetEtcd reads the Etcd, with an error that names it and its namespace when it does not exist.
func GetEtcd(ctx context.Context, c client.Reader, key types.NamespacedName) (*druidv1alpha1.Etcd, error) {
	etcd := &druidv1alpha1.Etcd{}
	if err := c.Get(ctx, key, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("no Etcd %s in namespace %s", key.Name, key.Namespace)
		}
		return nil, fmt.Errorf("reading Etcd %s in %s: %w", key.Name, key.Namespace, err)
	}
	return etcd, nil
}
