package hostsfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// debounce coalesces bursts of endpoint changes (a StatefulSet rolling) into one rewrite.
const debounce = 100 * time.Millisecond

// Writer keeps the hosts files of all running pods up to date.
type Writer struct {
	log     logr.Logger
	factory informers.SharedInformerFactory
	mu      sync.Mutex
	pods    map[types.UID]Pod
	trigger chan struct{}
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

// Register writes pod's hosts file now and keeps it updated until Unregister.
func (w *Writer) Register(uid types.UID, pod Pod) error {
	w.mu.Lock()
	w.pods[uid] = pod
	w.mu.Unlock()
	return w.write(pod)
}

// Unregister stops updating a pod's hosts file (the caller removes the file with the pod's directory).
func (w *Writer) Unregister(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, uid)
}

// Run rewrites all hosts files after changes until ctx ends.
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
		w.mu.Lock()
		pods := make([]Pod, 0, len(w.pods))
		for _, p := range w.pods {
			pods = append(pods, p)
		}
		w.mu.Unlock()
		for _, p := range pods {
			if err := w.write(p); err != nil {
				w.log.Error(err, "Rewriting hosts file failed", "pod", p.Namespace+"/"+p.Name)
			}
		}
	}
}

// write rewrites the file in place (truncate and write, never rename): the file is bind-mounted into
// running containers, and a rename would leave them with the old inode.
func (w *Writer) write(pod Pod) error {
	services, err := w.factory.Core().V1().Services().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	slices, err := w.factory.Discovery().V1().EndpointSlices().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	content := Render(pod, services, slices)
	if old, err := os.ReadFile(pod.Path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	f, err := os.OpenFile(pod.Path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("opening hosts file: %w", err)
	}
	if _, err := f.Write(content); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing hosts file: %w", err)
	}
	return f.Close()
}
