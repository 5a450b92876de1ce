// Package permissions finds out at start-up which of druid's optional features its own role does not
// allow, by asking the apiserver (SelfSubjectAccessReview, which every authenticated user may create).
// A role that grants less than druid's chart (Gardener's ClusterRole for etcd-druid grants no
// NetworkPolicies and no PVC deletion) must make druid skip those features with a condition and an event
// naming the permission, never hang: a watch of a forbidden kind never syncs, so a cached read of it waits
// forever, and a write of it fails on every reconcile.
package permissions

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Permission is one verb on one resource of one API group ("" is the core group), cluster-wide.
type Permission struct {
	Verb     string
	Group    string
	Resource string
}

// String is "verb resource.group" (kubectl's spelling, "verb resource" for the core group).
func (p Permission) String() string {
	if p.Group == "" {
		return p.Verb + " " + p.Resource
	}
	return p.Verb + " " + p.Resource + "." + p.Group
}

// Join names permissions for a message: "create networkpolicies.networking.k8s.io, …".
func Join(ps []Permission) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

// On is every verb of verbs on resource of group.
func On(group, resource string, verbs ...string) []Permission {
	ps := make([]Permission, len(verbs))
	for i, v := range verbs {
		ps[i] = Permission{Verb: v, Group: group, Resource: resource}
	}
	return ps
}

// NetworkPolicies are what druid needs to manage each Etcd's NetworkPolicy (a cached read, a watch and
// server-side writes).
var NetworkPolicies = On("networking.k8s.io", "networkpolicies", "get", "list", "watch", "create", "update", "patch", "delete")

// PVCDeletion is what the quorum-loss recovery needs to delete the members' data volumes.
var PVCDeletion = On("", "persistentvolumeclaims", "delete")

// MemberRelocation is what relocating a member whose volume is lost needs beyond the chart's other rules:
// reading the claim's PersistentVolume and the Nodes (to judge that the volume is unreachable) and
// deleting the claim.
var MemberRelocation = append(append(On("", "persistentvolumes", "get"), On("", "nodes", "list")...), PVCDeletion...)

// Missing returns those of wanted that the client's identity is not allowed, cluster-wide.
func Missing(ctx context.Context, c client.Client, wanted []Permission) ([]Permission, error) {
	var missing []Permission
	for _, p := range wanted {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource},
		}}
		if err := c.Create(ctx, review); err != nil {
			return nil, fmt.Errorf("asking the apiserver whether druid may %s: %w", p, err)
		}
		if !review.Status.Allowed {
			missing = append(missing, p)
		}
	}
	return missing, nil
}
