package node

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/podnet"
)

// Pod lifecycle timings.
const (
	// shutdownGrace is the grace containers get when the whole seed stops.
	shutdownGrace = 5 * time.Second
	// sandboxRetry is the pause between attempts to set up a pod whose volumes are not available yet.
	sandboxRetry = 2 * time.Second
	// statusResync re-reports the status periodically even without changes, like the kubelet.
	statusResync = 30 * time.Second
)

// podWorker runs one pod (one UID): sandbox (network namespace, hosts file, volumes), init containers in
// order, then app containers concurrently, status reporting and graceful deletion.
type podWorker struct {
	n   *Node
	log logr.Logger
	dir string

	mu          sync.Mutex
	pod         *corev1.Pod
	net         *podnet.Pod
	startTime   metav1.Time
	initialized bool
	sandboxErr  string
	inits       []*containerRunner
	containers  []*containerRunner

	statusDirty chan struct{}
	// deleting, shutdown and gone are closed (once) when the pod gets a deletion timestamp, the node
	// shuts down, or the object vanishes: broadcasts every waiter sees.
	deleting     chan struct{}
	shutdown     chan struct{}
	gone         chan struct{}
	deletingOnce sync.Once
	closeOnce    sync.Once
	goneOnce     sync.Once
	ending       chan struct{}
	endingOnce   sync.Once
}

func newPodWorker(n *Node, pod *corev1.Pod) *podWorker {
	return &podWorker{
		n: n, pod: pod.DeepCopy(), dir: n.podDir(pod),
		log:         n.cfg.Log.WithValues("pod", pod.Namespace+"/"+pod.Name, "node", n.cfg.Name),
		statusDirty: make(chan struct{}, 1),
		deleting:    make(chan struct{}),
		shutdown:    make(chan struct{}),
		gone:        make(chan struct{}),
		ending:      make(chan struct{}),
	}
}

func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod.DeepCopy()
	w.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		w.deletingOnce.Do(func() { close(w.deleting) })
		w.end()
	}
	w.markDirty()
}

func (w *podWorker) current() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

func (w *podWorker) stopForShutdown() { w.closeOnce.Do(func() { close(w.shutdown) }); w.end() }
func (w *podWorker) objectGone()      { w.goneOnce.Do(func() { close(w.gone) }); w.end() }
func (w *podWorker) end()             { w.endingOnce.Do(func() { close(w.ending) }) }
func (w *podWorker) markDirty()       { poke(w.statusDirty) }

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (w *podWorker) run(ctx context.Context) {
	w.startTime = metav1.Now()
	w.log.Info("Starting pod")
	started := time.Now()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go w.statusLoop(ctx)
	w.markDirty()

	if !w.setUpSandbox(ctx) || !w.runInitContainers(ctx) {
		w.finish(ctx)
		return
	}
	w.mu.Lock()
	w.initialized = true
	for i := range w.pod.Spec.Containers {
		r := newContainerRunner(w, w.pod.Spec.Containers[i], false)
		w.containers = append(w.containers, r)
		go r.run(ctx)
	}
	w.mu.Unlock()
	w.markDirty()
	w.log.V(1).Info("Pod containers started", "duration", time.Since(started).String())
	w.waitForEnd()
	w.finish(ctx)
}

// waitForEnd blocks until the pod is being deleted, the object vanished or the node shuts down.
func (w *podWorker) waitForEnd() { <-w.ending }

// setUpSandbox retries until network, hosts file and volumes exist, or the pod ends first.
func (w *podWorker) setUpSandbox(ctx context.Context) bool {
	for {
		err := w.prepareSandbox(ctx)
		if err == nil {
			w.mu.Lock()
			w.sandboxErr = ""
			w.mu.Unlock()
			w.markDirty()
			return true
		}
		w.log.Info("Pod sandbox not ready, retrying", "reason", err.Error())
		w.mu.Lock()
		w.sandboxErr = err.Error()
		w.mu.Unlock()
		w.markDirty()
		if !w.sleep(sandboxRetry) {
			return false
		}
	}
}

// sleep waits d; false when the pod is ending meanwhile.
func (w *podWorker) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-w.ending:
		return false
	}
}

func (w *podWorker) runInitContainers(ctx context.Context) bool {
	pod := w.current()
	for i := range pod.Spec.InitContainers {
		r := newContainerRunner(w, pod.Spec.InitContainers[i], true)
		w.mu.Lock()
		w.inits = append(w.inits, r)
		w.mu.Unlock()
		go r.run(ctx)
		select {
		case <-r.done:
			if !r.succeeded() {
				return false
			}
		case <-w.ending:
			return false
		}
	}
	return true
}

// grace is the termination grace of the pod: its deletion grace period, else the spec's, else 30 s;
// shortened on seed shutdown.
func (w *podWorker) grace() time.Duration {
	select {
	case <-w.shutdown:
		return shutdownGrace
	case <-w.gone:
		return 0
	default:
	}
	pod := w.current()
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// finish stops all containers, tears the sandbox down and, for a deleted pod, removes the object.
func (w *podWorker) finish(ctx context.Context) {
	grace := w.grace()
	w.mu.Lock()
	runners := append(append([]*containerRunner(nil), w.inits...), w.containers...)
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop(grace) }()
	}
	wg.Wait()
	w.tearDownSandbox(ctx)
	select {
	case <-w.shutdown:
		w.log.Info("Pod stopped for node shutdown")
		return
	default:
	}
	pod := w.current()
	if pod.DeletionTimestamp != nil {
		w.n.forceDelete(ctx, pod)
		w.log.Info("Pod deleted", "grace", grace.String())
	}
}

func (w *podWorker) tearDownSandbox(ctx context.Context) {
	w.n.cfg.Hosts.Unregister(w.pod.UID)
	w.mu.Lock()
	netPod := w.net
	w.mu.Unlock()
	if netPod != nil {
		if err := w.n.cfg.Network.RemovePod(ctx, netPod); err != nil {
			w.log.Error(err, "Removing pod network failed")
		}
	}
	if err := os.RemoveAll(w.dir); err != nil {
		w.log.Error(err, "Removing pod directory failed")
	}
}
