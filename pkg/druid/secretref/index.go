package secretref

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// IndexName is the cache field index on Etcds whose values are the "<namespace>/<name>" keys of the Secrets
// each Etcd holds on to. With it a Secret event finds its Etcds with one lookup instead of a scan:
//
//	c.List(ctx, &druidv1alpha1.EtcdList{}, client.MatchingFields{secretref.IndexName: secretref.Key(ns, name)})
//
// The lookup is cluster-wide on purpose: a reference may point into another namespace.
const IndexName = "druid.gardener.cloud/referenced-secrets"

// HoldsSecrets tells whether the Etcd still needs the Secrets it references. An Etcd that is being deleted
// keeps needing them while it carries druid's finalizer: its deletion flow still runs and its pods (which
// mount the TLS and backup secrets) may still be terminating. Once druid's finalizer is gone, druid is done
// with the Etcd, even if foreign finalizers keep the object around.
func HoldsSecrets(etcd *druidv1alpha1.Etcd) bool {
	return etcd.DeletionTimestamp.IsZero() || controllerutil.ContainsFinalizer(etcd, druidv1alpha1.FinalizerName)
}

// IndexValues is the indexer function of IndexName: Keys of an Etcd that HoldsSecrets, nothing otherwise.
func IndexValues(obj client.Object) []string {
	etcd, ok := obj.(*druidv1alpha1.Etcd)
	if !ok || !HoldsSecrets(etcd) {
		return nil
	}
	return Keys(etcd)
}

// AddIndex registers IndexName on the Etcd informer. Both the Etcd controller and the secret finalizer
// controller need the index and either may be disabled, so each registers it; a second registration of the
// same index is not an error.
func AddIndex(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &druidv1alpha1.Etcd{}, IndexName, IndexValues)
	if err != nil && strings.Contains(err.Error(), "indexer conflict") {
		// client-go reports an existing index only by this message; the index is the same function.
		return nil
	}
	if err != nil {
		return fmt.Errorf("indexing Etcds by referenced secrets: %w", err)
	}
	return nil
}
