//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// memberSelector selects the member pods of role's Etcd by druid's labels.
func memberSelector(role string) string {
	return fmt.Sprintf("%s=%s,%s=%s", druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey, etcd.Name(role))
}

// restartTracker watches the member pods of one Etcd and counts how often a member restarted: each pod
// recreation (a new UID under the same name) and each restart of the etcd container (restartCount, which
// the local seed's nodes report like a kubelet). A watch sees every pod version, so no restart is missed.
type restartTracker struct {
	mu sync.Mutex
	// restarts[pod][uid] is the highest etcd container restartCount seen for that pod incarnation.
	restarts map[string]map[types.UID]int32
	cancel   context.CancelFunc
}

func trackRestarts(ctx context.Context, env *seedworkflow.Env, role string) *restartTracker {
	cs, err := kubernetes.NewForConfig(env.Seed.RESTConfig())
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(env.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = memberSelector(role) }))
	t := &restartTracker{restarts: map[string]map[types.UID]int32{}, cancel: cancel}
	observe := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			t.observe(pod)
		}
	}
	informer := factory.Core().V1().Pods().Informer()
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) }})
	Expect(err).NotTo(HaveOccurred())
	factory.Start(ctx.Done())
	Expect(cache.WaitForCacheSync(ctx.Done(), informer.HasSynced)).To(BeTrue())
	return t
}

func (t *restartTracker) observe(pod *corev1.Pod) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.restarts[pod.Name] == nil {
		t.restarts[pod.Name] = map[types.UID]int32{}
	}
	count := t.restarts[pod.Name][pod.UID]
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "etcd" {
			count = max(count, cs.RestartCount)
		}
	}
	t.restarts[pod.Name][pod.UID] = count
}

// stop ends the watch and returns the member restarts (recreations plus etcd container restarts) in
// total and as a description per pod.
func (t *restartTracker) stop() (int, string) {
	t.cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	total := 0
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(t.restarts)) {
		uids := t.restarts[name]
		containerRestarts := int32(0)
		for _, n := range uids {
			containerRestarts += n
		}
		recreations := len(uids) - 1
		total += recreations + int(containerRestarts)
		parts = append(parts, fmt.Sprintf("%s: %d recreation(s), %d etcd container restart(s)", name, recreations, containerRestarts))
	}
	return total, strings.Join(parts, "; ")
}

// memberPod reads a member pod.
func memberPod(ctx context.Context, env *seedworkflow.Env, name string) *corev1.Pod {
	pod := &corev1.Pod{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, pod)).To(Succeed())
	return pod
}

// wipeMemberData deletes everything in the member's volume, as if its disk had been replaced: the
// directory of the PV bound to the member's claim (the local seed's provisioner keeps one directory per PV,
// named in the PV's spec.local.path) is emptied while the member runs; the caller then kills the pod.
func wipeMemberData(ctx context.Context, env *seedworkflow.Env, role string, ordinal int) {
	obj := getEtcd(ctx, env, role)
	claimName := fmt.Sprintf("%s-%s-%d", druidv1alpha1.VolumeClaimTemplateName(obj), obj.Name, ordinal)
	pvc := &corev1.PersistentVolumeClaim{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: claimName}, pvc)).To(Succeed())
	Expect(pvc.Spec.VolumeName).NotTo(BeEmpty(), "claim %s is not bound", claimName)
	pv := &corev1.PersistentVolume{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
	Expect(pv.Spec.Local).NotTo(BeNil(), "volume %s is not a local volume of the seed", pv.Name)
	dir := pv.Spec.Local.Path
	Expect(dir).To(HavePrefix(env.Seed.StateDir()), "volume %s lives outside the seed", pv.Name)
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	Expect(entries).NotTo(BeEmpty(), "volume %s of %s holds no data to wipe", pv.Name, claimName)
	for _, e := range entries {
		Expect(os.RemoveAll(filepath.Join(dir, e.Name()))).To(Succeed())
	}
}

// deletePod deletes a member pod (gracefully) and returns its UID, to wait for the replacement.
func deletePod(ctx context.Context, env *seedworkflow.Env, name string) types.UID {
	pod := memberPod(ctx, env, name)
	Expect(env.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})).To(Succeed())
	return pod.UID
}

// waitReplaced waits until the pod name runs again as a new incarnation (not uid) and is Ready.
func waitReplaced(ctx context.Context, env *seedworkflow.Env, name string, uid types.UID) {
	Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, pod)).To(Succeed())
		g.Expect(pod.UID).NotTo(Equal(uid), "the old pod %s still exists", name)
		ready := false
		for _, c := range pod.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		g.Expect(ready).To(BeTrue(), "pod %s is not ready", name)
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}
