package component

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Clients are what the operators reach the apiserver with.
type Clients struct {
	// Client writes, and reads from druid's cache, which holds only objects labelled
	// app.kubernetes.io/managed-by=etcd-druid (etcd.CacheOptions): reading an object druid is about to
	// create costs the apiserver nothing.
	client.Client
	// Live reads from the apiserver. It is asked when a create finds the object already there, and by
	// adoption, which looks for objects the cache cannot see because they lack druid's label.
	Live client.Reader
}

// Uncached returns Clients for a client that reads from the apiserver itself (tests, tools).
func Uncached(c client.Client) Clients { return Clients{Client: c, Live: c} }

// liveReads is c with its reads going to the apiserver.
type liveReads struct {
	client.Client
	live client.Reader
}

func (l liveReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return l.live.Get(ctx, key, obj, opts...)
}

func (l liveReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.live.List(ctx, list, opts...)
}

// CreateOrPatch is controllerutil.CreateOrPatch on a fresh object from newObject, reading through the
// cache. When the create after a cache miss finds the object already there — it lost druid's label (the
// cache does not select it), or the cache has not seen its creation yet — it runs once more reading from
// the apiserver, so that the stored object is patched (and gets its labels back) instead of the sync
// failing. It returns the object it synced.
func CreateOrPatch[T client.Object](ctx context.Context, c Clients, newObject func() T, mutate func(T) error) (T, controllerutil.OperationResult, error) {
	run := func(cl client.Client) (T, controllerutil.OperationResult, error) {
		obj := newObject()
		result, err := controllerutil.CreateOrPatch(ctx, cl, obj, func() error { return mutate(obj) })
		return obj, result, err
	}
	obj, result, err := run(c.Client)
	if apierrors.IsAlreadyExists(err) && c.Live != nil {
		return run(liveReads{Client: c.Client, live: c.Live})
	}
	return obj, result, err
}
