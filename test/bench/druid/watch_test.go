package druid

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// burstWatch follows a burst's StatefulSets (metadata only) and Etcds through one informer each. The
// benchmark observes the burst this way, not by listing the namespace again and again: a poll costs the
// apiserver a LIST of every object so far, so polling grows with n × duration (n²) and would show up as a
// per-Etcd apiserver cost that rises with the burst size although druid's does not. A watch costs one
// event per change, like druid's own informers.
type burstWatch struct {
	start time.Time
	n     int

	mu              sync.Mutex
	statefulSets    map[string]bool
	observed        map[string]bool // Etcd name → status.observedGeneration == metadata.generation
	allStatefulSets time.Duration
	allObserved     time.Duration
	done            chan struct{}
}

// watchBurst starts the informers for namespace and waits until they have synced. Times are measured from
// start, which the caller sets right before it creates the burst.
func watchBurst(ctx context.Context, cfg *rest.Config, namespace string, n int) (*burstWatch, error) {
	informers, err := cache.New(cfg, cache.Options{Scheme: envtest.Scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return nil, err
	}
	w := &burstWatch{n: n, statefulSets: map[string]bool{}, observed: map[string]bool{}, done: make(chan struct{})}
	statefulSets := &metav1.PartialObjectMetadata{}
	statefulSets.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	if err := w.handle(ctx, informers, statefulSets, w.statefulSetSeen); err != nil {
		return nil, err
	}
	if err := w.handle(ctx, informers, &druidv1alpha1.Etcd{}, w.etcdSeen); err != nil {
		return nil, err
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the informers of namespace %s did not sync", namespace)
	}
	return w, nil
}

func (w *burstWatch) handle(ctx context.Context, informers cache.Cache, obj client.Object, seen func(any)) error {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	})
	return err
}

// begin sets the moment the burst's times are measured from.
func (w *burstWatch) begin() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start = time.Now()
	return w.start
}

func (w *burstWatch) statefulSetSeen(obj any) {
	sts, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.statefulSets[sts.Name] = true
	if w.allStatefulSets == 0 && len(w.statefulSets) == w.n {
		w.allStatefulSets = time.Since(w.start)
	}
	w.checkDone()
}

func (w *burstWatch) etcdSeen(obj any) {
	etcd, ok := obj.(*druidv1alpha1.Etcd)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observed[etcd.Name] = etcd.Status.ObservedGeneration != nil && *etcd.Status.ObservedGeneration == etcd.Generation
	w.checkDone()
}

// checkDone closes done once every StatefulSet exists and every Etcd is observed; mu is held.
func (w *burstWatch) checkDone() {
	if w.allObserved != 0 || w.allStatefulSets == 0 {
		return
	}
	observed := 0
	for _, ok := range w.observed {
		if ok {
			observed++
		}
	}
	if observed == w.n {
		w.allObserved = time.Since(w.start)
		close(w.done)
	}
}

// progress is how many StatefulSets exist and how many Etcds are observed so far.
func (w *burstWatch) progress() (statefulSets, observed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ok := range w.observed {
		if ok {
			observed++
		}
	}
	return len(w.statefulSets), observed
}

// times are the two durations since begin; valid after done is closed.
func (w *burstWatch) times() (allStatefulSets, allObserved time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.allStatefulSets, w.allObserved
}
