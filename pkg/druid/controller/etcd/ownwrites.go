package etcd

import (
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ownWrites remembers the resourceVersion of the Etcd controller's last write of each Etcd. The cache can
// lag behind those writes: a reconcile started by an earlier event of the same run may see the Etcd
// before the controller's own status write or annotation removal, take a spec reconcile for due, and a
// spec run on a stale spec would roll the StatefulSet back. Resource versions of one resource compare as
// integers (k8s.io/apimachinery/pkg/util/resourceversion, Kubernetes KEP-5504), so a cached copy older
// than the controller's last write is recognised without a read from the apiserver, and one that holds it
// does not lag behind anything the controller did. Writes of other controllers (the compaction
// condition, an EtcdOpsTask's annotation removal) are not recorded: a spec run on a copy that lags behind
// them fails at its first write (recordStart's Processing, or a new Etcd's finalizer) with a conflict, and
// starts over.
type ownWrites struct {
	writes sync.Map // types.NamespacedName → ownWrite
}

type ownWrite struct {
	resourceVersion string
	at              time.Time
}

// ownWriteMemory bounds how long a write is expected to reach the cache. Should it not (the apiserver's
// etcd restored to an older revision, say), the stored object is read as before instead of waiting.
const ownWriteMemory = 30 * time.Second

// freshness is how a cached Etcd compares with druid's last write of it.
type freshness int

const (
	// freshnessUnknown: no write recorded (or too long ago), or versions that do not compare; the stored
	// object is read.
	freshnessUnknown freshness = iota
	// cacheHoldsOwnWrite: the cached copy is druid's last write or newer.
	cacheHoldsOwnWrite
	// cacheBehindOwnWrite: the cache has not caught up with druid's last write yet.
	cacheBehindOwnWrite
)

// errCacheBehindOwnWrite stops a reconcile whose cached Etcd predates druid's own last write of it; it
// starts over once the cache caught up.
var errCacheBehindOwnWrite = errors.New("the cached Etcd predates druid's last write of it")

// record notes etcd's resourceVersion as the apiserver answered a write of druid's at now.
func (o *ownWrites) record(etcd *druidv1alpha1.Etcd, now time.Time) {
	if etcd.ResourceVersion == "" {
		return
	}
	o.writes.Store(types.NamespacedName{Namespace: etcd.Namespace, Name: etcd.Name}, ownWrite{resourceVersion: etcd.ResourceVersion, at: now})
}

// forget drops what is recorded for an Etcd that is gone.
func (o *ownWrites) forget(key types.NamespacedName) {
	o.writes.Delete(key)
}

// freshnessOf compares a cached Etcd with druid's last write of it, at now.
func (o *ownWrites) freshnessOf(cached *druidv1alpha1.Etcd, now time.Time) freshness {
	key := types.NamespacedName{Namespace: cached.Namespace, Name: cached.Name}
	value, ok := o.writes.Load(key)
	if !ok {
		return freshnessUnknown
	}
	write := value.(ownWrite)
	order, err := resourceversion.CompareResourceVersion(cached.ResourceVersion, write.resourceVersion)
	switch {
	case err != nil:
		return freshnessUnknown
	case order >= 0:
		return cacheHoldsOwnWrite
	case now.Sub(write.at) > ownWriteMemory:
		o.writes.CompareAndDelete(key, value)
		return freshnessUnknown
	default:
		return cacheBehindOwnWrite
	}
}
