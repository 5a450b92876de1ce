package etcdops

import (
	"context"
	"fmt"
	"sort"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Summary is what an operator checks first about one Etcd. Its JSON form is the output of
// `gardener-etcd etcd list -o json`, so the field names are part of the command's interface.
type Summary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Replicas is spec.replicas, ReadyReplicas status.readyReplicas.
	Replicas      int32 `json:"replicas"`
	ReadyReplicas int32 `json:"readyReplicas"`
	// Ready is the Ready condition, nil before druid wrote one.
	Ready *ConditionSummary `json:"ready,omitempty"`
	// Conditions are all conditions of the status, in the order druid wrote them.
	Conditions []ConditionSummary `json:"conditions,omitempty"`
	// LastFullSnapshot and LastDeltaSnapshot are what the snapshot leases record (the backup leader's
	// sidecar renews them after each upload); nil when no lease records a snapshot yet.
	LastFullSnapshot  *Snapshot `json:"lastFullSnapshot,omitempty"`
	LastDeltaSnapshot *Snapshot `json:"lastDeltaSnapshot,omitempty"`
	// SpecReconcileSuspended is the value of the suspend annotation (the reason), nil when not suspended.
	SpecReconcileSuspended *string `json:"specReconcileSuspended,omitempty"`
	// ComponentProtectionDisabled is the value of the disable-protection annotation, nil when the
	// components are protected (as far as the protection webhook is served at all).
	ComponentProtectionDisabled *string `json:"componentProtectionDisabled,omitempty"`
}

// ConditionSummary is one condition without its timestamps.
type ConditionSummary struct {
	Type    druidv1alpha1.ConditionType   `json:"type"`
	Status  druidv1alpha1.ConditionStatus `json:"status"`
	Reason  string                        `json:"reason,omitempty"`
	Message string                        `json:"message,omitempty"`
}

// Snapshot is the last snapshot of one kind as its lease records it.
type Snapshot struct {
	// Name is the snapshot's object name in the store, when the sidecar recorded it.
	Name *string `json:"name,omitempty"`
	// Revision is the last etcd revision the snapshot holds.
	Revision int64 `json:"revision"`
	// Time is when the sidecar recorded it.
	Time metav1.Time `json:"time"`
}

// List summarizes the Etcds of namespace, or of every namespace when namespace is empty, sorted by
// namespace and name. The snapshot leases are listed once rather than read per Etcd, so that a seed with
// many Etcds costs two list calls.
func List(ctx context.Context, c client.Reader, namespace string) ([]Summary, error) {
	where := "every namespace"
	var opts []client.ListOption
	if namespace != "" {
		where = "namespace " + namespace
		opts = append(opts, client.InNamespace(namespace))
	}
	etcds := &druidv1alpha1.EtcdList{}
	if err := c.List(ctx, etcds, opts...); err != nil {
		return nil, fmt.Errorf("listing the Etcds in %s: %w", where, err)
	}
	if len(etcds.Items) == 0 {
		return nil, nil
	}
	leases := &coordinationv1.LeaseList{}
	if err := c.List(ctx, leases, opts...); err != nil {
		return nil, fmt.Errorf("listing the leases in %s (the snapshot leases): %w", where, err)
	}
	byName := make(map[types.NamespacedName]*coordinationv1.Lease, len(leases.Items))
	for i := range leases.Items {
		byName[client.ObjectKeyFromObject(&leases.Items[i])] = &leases.Items[i]
	}
	summaries := make([]Summary, 0, len(etcds.Items))
	for i := range etcds.Items {
		e := &etcds.Items[i]
		full := byName[types.NamespacedName{Namespace: e.Namespace, Name: druidv1alpha1.FullSnapshotLeaseName(e)}]
		delta := byName[types.NamespacedName{Namespace: e.Namespace, Name: druidv1alpha1.DeltaSnapshotLeaseName(e)}]
		summaries = append(summaries, Summarize(e, health.SnapshotLeases{Full: full, Delta: delta}))
	}
	sort.Slice(summaries, func(i, j int) bool {
		if summaries[i].Namespace != summaries[j].Namespace {
			return summaries[i].Namespace < summaries[j].Namespace
		}
		return summaries[i].Name < summaries[j].Name
	})
	return summaries, nil
}

// Summarize is the summary of one Etcd with its snapshot leases (either may be nil).
func Summarize(e *druidv1alpha1.Etcd, leases health.SnapshotLeases) Summary {
	s := Summary{
		Namespace: e.Namespace, Name: e.Name,
		Replicas: e.Spec.Replicas, ReadyReplicas: e.Status.ReadyReplicas,
		LastFullSnapshot:            snapshotOf(leases.Full),
		LastDeltaSnapshot:           snapshotOf(leases.Delta),
		SpecReconcileSuspended:      annotation(e, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation),
		ComponentProtectionDisabled: annotation(e, druidv1alpha1.DisableEtcdComponentProtectionAnnotation),
	}
	for _, c := range e.Status.Conditions {
		cs := ConditionSummary{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
		s.Conditions = append(s.Conditions, cs)
		if c.Type == druidv1alpha1.ConditionTypeReady {
			s.Ready = &cs
		}
	}
	return s
}

func snapshotOf(lease *coordinationv1.Lease) *Snapshot {
	if lease == nil {
		return nil
	}
	recorded := health.SnapshotFromLease(lease)
	if recorded == nil {
		return nil
	}
	return &Snapshot{Name: recorded.Name, Revision: recorded.EndRevision, Time: recorded.Timestamp}
}

func annotation(e *druidv1alpha1.Etcd, key string) *string {
	if v, ok := e.Annotations[key]; ok {
		return &v
	}
	return nil
}
