// Package node is the local seed's process node, a kubelet stand-in: it registers a Node, renews its
// Lease and runs every pod bound to it as processes in the pod's own network namespace (see podworker.go).
package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/hostsfile"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/podnet"
)

// Config is what a node needs from its seed.
type Config struct {
	// Name is the Node name; Zone its topology.kubernetes.io/zone.
	Name, Zone string
	Client     kubernetes.Interface
	Network    *podnet.Network
	Hosts      *hostsfile.Writer
	// Images maps a container image (exactly as in the pod spec) to a local binary.
	Images map[string]string
	// StateDir holds the node's pod directories; LogDir the per-container log files.
	StateDir, LogDir string
	// APIServerHost and APIServerPort are what pods get as KUBERNETES_SERVICE_HOST/PORT.
	APIServerHost string
	APIServerPort int
	// RestartBackoff is the first container restart delay, doubled per crash up to MaxRestartBackoff.
	RestartBackoff, MaxRestartBackoff time.Duration
	Log                               logr.Logger
}

// Node runs the pods bound to one Node object.
type Node struct {
	cfg     Config
	mu      sync.Mutex
	workers map[types.UID]*podWorker
	wg      sync.WaitGroup
}

// New returns a node; Run starts it.
func New(cfg Config) *Node { return &Node{cfg: cfg, workers: map[types.UID]*podWorker{}} }

// Register creates (or refreshes) the Node object and its Lease, so that the scheduler can use the node
// as soon as Register returns.
func (n *Node) Register(ctx context.Context) error {
	if err := os.MkdirAll(n.cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("creating node dir: %w", err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Labels: map[string]string{
		corev1.LabelHostname: n.cfg.Name, corev1.LabelTopologyZone: n.cfg.Zone,
		corev1.LabelTopologyRegion: "local", corev1.LabelOSStable: "linux", corev1.LabelArchStable: runtime.GOARCH,
	}}}
	if _, err := n.cfg.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering node %s: %w", n.cfg.Name, err)
	}
	if err := n.reportStatus(ctx); err != nil {
		return fmt.Errorf("reporting status of node %s: %w", n.cfg.Name, err)
	}
	return n.renewLease(ctx)
}

// Run watches the pods bound to the node until ctx ends, then stops all of them.
func (n *Node) Run(ctx context.Context) {
	log := n.cfg.Log
	factory := informers.NewSharedInformerFactoryWithOptions(n.cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName=" + n.cfg.Name }))
	informer := factory.Core().V1().Pods().Informer()
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.podChanged(ctx, obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { n.podChanged(ctx, obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				n.podDeleted(pod)
			}
		},
	})
	factory.Start(ctx.Done())
	go n.heartbeat(ctx)
	<-ctx.Done()
	factory.Shutdown()
	n.mu.Lock()
	for _, w := range n.workers {
		w.stopForShutdown()
	}
	n.mu.Unlock()
	n.wg.Wait()
	log.Info("Node stopped", "node", n.cfg.Name)
}

func (n *Node) podChanged(ctx context.Context, pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w, ok := n.workers[pod.UID]; ok {
		w.update(pod)
		return
	}
	if pod.DeletionTimestamp != nil {
		// Nothing of the pod runs here (it finished, its worker is gone, or it is deleted before it
		// started): never start it, remove the object like the kubelet does.
		go n.forceDelete(ctx, pod)
		return
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	w := newPodWorker(n, pod)
	w.update(pod)
	n.workers[pod.UID] = w
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		w.run(ctx)
		n.mu.Lock()
		delete(n.workers, pod.UID)
		n.mu.Unlock()
	}()
}

// podDeleted handles a pod object that vanished without our graceful path (force deletion).
func (n *Node) podDeleted(pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w, ok := n.workers[pod.UID]; ok {
		w.objectGone()
	}
}

// forceDelete removes a pod object whose processes are gone (grace 0, only this UID), retrying
// transient errors: a lingering object would keep its StatefulSet from creating the replacement.
func (n *Node) forceDelete(ctx context.Context, pod *corev1.Pod) {
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second},
		func(ctx context.Context) (bool, error) {
			err := n.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
			// NotFound: gone already; Conflict: the UID precondition failed, the name belongs to a successor.
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return true, nil
			}
			n.cfg.Log.Info("Removing pod object failed, retrying", "pod", pod.Namespace+"/"+pod.Name, "error", err.Error())
			return false, nil
		})
	if err != nil {
		n.cfg.Log.Error(err, "Removing pod object failed", "pod", pod.Namespace+"/"+pod.Name)
	}
}

func (n *Node) podDir(pod *corev1.Pod) string {
	return filepath.Join(n.cfg.StateDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

func capacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           resource.MustParse("16Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}
