package component

import (
	"context"
	"errors"
	"fmt"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Kind identifies one kind of managed object. Its value appears in logs; codeName gives its fragment of
// the stable error codes.
type Kind string

// The managed kinds, one per Operator package.
const (
	KindServiceAccount      Kind = "ServiceAccount"
	KindRole                Kind = "Role"
	KindRoleBinding         Kind = "RoleBinding"
	KindMemberLease         Kind = "MemberLease"
	KindSnapshotLease       Kind = "SnapshotLease"
	KindPodDisruptionBudget Kind = "PodDisruptionBudget"
	KindNetworkPolicy       Kind = "NetworkPolicy"
	KindClientService       Kind = "ClientService"
	KindPeerService         Kind = "PeerService"
	KindConfigMap           Kind = "ConfigMap"
	KindStatefulSet         Kind = "StatefulSet"
)

// SyncOrder is upstream etcd-druid's order: identities and RBAC first (the pods need
// them to renew leases), then the leases the sidecar renews, the PDB, the NetworkPolicy, the Services, the
// ConfigMap the pods read, and the StatefulSet last so that every pod starts with all it depends on in place
// (including the limits on who may reach it).
var SyncOrder = []Kind{
	KindServiceAccount,
	KindRole,
	KindRoleBinding,
	KindMemberLease,
	KindSnapshotLease,
	KindPodDisruptionBudget,
	KindNetworkPolicy,
	KindClientService,
	KindPeerService,
	KindConfigMap,
	KindStatefulSet,
}

var codeNames = map[Kind]string{
	KindServiceAccount:      "SERVICE_ACCOUNT",
	KindRole:                "ROLE",
	KindRoleBinding:         "ROLE_BINDING",
	KindMemberLease:         "MEMBER_LEASE",
	KindSnapshotLease:       "SNAPSHOT_LEASE",
	KindPodDisruptionBudget: "POD_DISRUPTION_BUDGET",
	KindNetworkPolicy:       "NETWORK_POLICY",
	KindClientService:       "CLIENT_SERVICE",
	KindPeerService:         "PEER_SERVICE",
	KindConfigMap:           "CONFIGMAP",
	KindStatefulSet:         "STATEFULSET",
}

func (k Kind) codeName() string {
	if name, ok := codeNames[k]; ok {
		return name
	}
	return "UNKNOWN"
}

// Registration is one Operator with the kind it manages.
type Registration struct {
	Kind     Kind
	Operator Operator
}

// Registry holds every Operator in SyncOrder. The spec flow syncs through it front to back; the deletion
// flow deletes through all of it.
type Registry []Registration

// NewRegistry orders the given operators by SyncOrder. Every kind must be present exactly once, so that a
// forgotten operator is a start-up error and not a silently missing object.
func NewRegistry(operators map[Kind]Operator) (Registry, error) {
	registry := make(Registry, 0, len(SyncOrder))
	for _, kind := range SyncOrder {
		op, ok := operators[kind]
		if !ok || op == nil {
			return nil, fmt.Errorf("component registry: no operator for %s", kind)
		}
		registry = append(registry, Registration{Kind: kind, Operator: op})
	}
	if len(operators) != len(SyncOrder) {
		return nil, fmt.Errorf("component registry: %d operators given, %d kinds known", len(operators), len(SyncOrder))
	}
	return registry, nil
}

// Get returns the operator of a kind, or nil.
func (r Registry) Get(kind Kind) Operator {
	for _, reg := range r {
		if reg.Kind == kind {
			return reg.Operator
		}
	}
	return nil
}

// SyncAll syncs every operator in order and stops at the first error or requeue, because later objects
// depend on earlier ones (the StatefulSet on the ConfigMap, the pods on the RBAC objects).
func (r Registry) SyncAll(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	for _, reg := range r {
		if err := reg.Operator.Sync(ctx, etcd); err != nil {
			return err
		}
	}
	return nil
}

// TriggerDeleteAll triggers the deletion of every kind and joins the errors: one failing kind must not
// keep the others alive.
func (r Registry) TriggerDeleteAll(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	var errs []error
	for _, reg := range r {
		errs = append(errs, reg.Operator.TriggerDelete(ctx, etcd))
	}
	return errors.Join(errs...)
}
