package hostsfile

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// debounce coalesces bursts of service and endpoint-slice events into one rewrite. Changes of the
// seed's own pods do not wait for it: they are written before the node reports them.
const debounce = 100 * time.Millisecond

// Writer keeps the hosts files of all running pods up to date.
type Writer struct {
	log     logr.Logger
	factory informers.SharedInformerFactory
	mu      sync.Mutex
	pods    map[types.UID]Pod
	trigger chan struct{}
	// writeMu serialises rewrites, so two never interleave in one file.
	writeMu sync.Mutex
}

// New registers the service and endpoint-slice informers on factory; start the factory and Run.
func New(log logr.Logger, factory informers.SharedInformerFactory) *Writer {
	w := &Writer{log: log, factory: factory, pods: map[types.UID]Pod{}, trigger: make(chan struct{}, 1)}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.poke() },
		UpdateFunc: func(any, any) { w.poke() },
		DeleteFunc: func(any) { w.poke() },
	}
	_, _ = factory.Core().V1().Services().Informer().AddEventHandler(handler)
	_, _ = factory.Discovery().V1().EndpointSlices().Informer().AddEventHandler(handler)
	return w
}

func (w *Writer) poke() {
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// Register adds a pod whose network exists: its hosts file is written and, as services with
// publishNotReadyAddresses list it from now on, every other one is rewritten before Register returns.
func (w *Writer) Register(uid types.UID, pod Pod) error {
	w.mu.Lock()
	w.pods[uid] = pod
	w.mu.Unlock()
	return w.rewriteAll()
}

// Status is what changes of a registered pod while it runs.
type Status struct {
	Ready, Terminating bool
	Labels             map[string]string
}

// SetStatus records a pod's readiness, termination and labels and, when that changes any hosts file,
// rewrites them before it returns: the node calls it before reporting the status, so a pod shown Ready
// in the API resolves everywhere. Unknown (already unregistered) pods are ignored.
func (w *Writer) SetStatus(uid types.UID, s Status) error {
	w.mu.Lock()
	pod, ok := w.pods[uid]
	changed := ok && (pod.Ready != s.Ready || pod.Terminating != s.Terminating || !maps.Equal(pod.Labels, s.Labels))
	if changed {
		pod.Ready, pod.Terminating, pod.Labels = s.Ready, s.Terminating, maps.Clone(s.Labels)
		w.pods[uid] = pod
	}
	w.mu.Unlock()
	if !changed {
		return nil
	}
	return w.rewriteAll()
}

// Unregister stops updating a pod's hosts file (the caller removes the file with the pod's directory)
// and removes the pod from the others' at once.
func (w *Writer) Unregister(uid types.UID) {
	w.mu.Lock()
	_, ok := w.pods[uid]
	delete(w.pods, uid)
	w.mu.Unlock()
	if ok {
		if err := w.rewriteAll(); err != nil {
			w.log.Error(err, "Rewriting hosts files after a pod left failed")
		}
	}
}

// Run rewrites all hosts files after service and endpoint changes until ctx ends.
func (w *Writer) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.trigger:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(debounce):
		}
		if err := w.rewriteAll(); err != nil {
			w.log.Error(err, "Rewriting hosts files failed")
		}
	}
}

// rewriteAll renders every registered pod's file from one snapshot of the cluster.
func (w *Writer) rewriteAll() error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	services, err := w.factory.Core().V1().Services().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	slices, err := w.factory.Discovery().V1().EndpointSlices().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	w.mu.Lock()
	c := Cluster{Services: services, Slices: slices, Pods: maps.Clone(w.pods)}
	w.mu.Unlock()
	var firstErr error
	for _, p := range c.Pods {
		if err := write(p.Path, Render(p, c)); err != nil {
			w.log.Error(err, "Rewriting hosts file failed", "pod", p.Namespace+"/"+p.Name)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// write rewrites the file in place, never by rename: the file is bind-mounted into running containers,
// and a rename would leave them with the old inode. The new content is written over the old one before
// the file is cut to its length, so a concurrent reader never sees an empty file (an empty hosts file
// would make the resolver fall back to DNS for every name).
func write(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening hosts file: %w", err)
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing hosts file: %w", err)
	}
	if err := f.Truncate(int64(len(content))); err != nil {
		_ = f.Close()
		return fmt.Errorf("truncating hosts file: %w", err)
	}
	return f.Close()
}
