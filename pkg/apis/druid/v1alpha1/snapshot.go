package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SnapshotStatus is one snapshot as a snapshot lease records it: the full-snapshot lease (<name>-full-snap)
// and the delta-snapshot lease (<name>-delta-snap) that the backup leader's sidecar renews after each upload,
// with holderIdentity = the snapshot's last revision and renewTime = when it recorded it (upstream
// etcd-druid's convention). It is no field of the stored API (upstream's CRD has none): druid, the
// Gardener side and the tests read it from the leases (health.SnapshotFromLease).
type SnapshotStatus struct {
	// Name is the snapshot's object name in the store (base name, e.g.
	// Full-00000000-00001234-1700000000.gz): the lease's annotation snapshot.etcd.gardener.cloud/name,
	// which this project's sidecar writes; unset when the lease carries none (an upstream sidecar).
	Name *string
	// EndRevision is the last etcd revision the snapshot holds: the lease's holderIdentity.
	EndRevision int64
	// Timestamp is the lease's renewTime: when the sidecar last recorded EndRevision as stored.
	Timestamp metav1.Time
}
