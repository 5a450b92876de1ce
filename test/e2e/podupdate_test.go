//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Member pod updates under updateStrategy OnDelete: a three-member etcd-main under a writer gets a pod
// template with an etcd image that cannot be pulled. Druid replaces one member, which then cannot start,
// and holds the update there (the other two keep serving); the next template (the good image again, with a
// new pod annotation) replaces the broken member first, then the others one at a time. At no sample are
// fewer than two members Ready, and every acknowledged write is on every member.
var _ = Describe("member pod update", func() {
	It("replaces the member a bad image broke first and never drops below the quorum", func(ctx SpecContext) {
		env := newShoot(ctx, "podupdate", 0)
		deployMain(ctx, env, 3)
		obj := getEtcd(ctx, env, etcd.RoleMain)
		Expect(statefulSetOf(ctx, env, obj).Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType))
		good := etcdContainerImage(statefulSetOf(ctx, env, obj))

		serving := sampleServingMembers(ctx, env)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/podupdate/")

		By("a template with an etcd image that cannot be pulled")
		before := podUIDsByName(ctx, env)
		bad := imageRepository(good) + ":does-not-exist"
		setEtcdImage(ctx, env, bad, "bad")
		var broken string
		Eventually(func(g Gomega) {
			sts := statefulSetOf(ctx, env, obj)
			for name, pod := range memberPods(ctx, env) {
				if pod.Labels[appsv1.ControllerRevisionHashLabelKey] == sts.Status.UpdateRevision && string(pod.UID) != before[name] {
					broken = name
				}
			}
			g.Expect(broken).NotTo(BeEmpty(), "a member was replaced with the bad image")
			g.Expect(eventsWithReason(ctx, env, etcdcontroller.EventReasonMemberPodUpdateHeld)).To(ContainElement(ContainSubstring(broken)))
		}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		Consistently(func(g Gomega) {
			now := podUIDsByName(ctx, env)
			for name, uid := range before {
				if name != broken {
					g.Expect(now[name]).To(Equal(uid), "%s must not be replaced while %s cannot start", name, broken)
				}
			}
		}).WithTimeout(30 * time.Second).WithPolling(pollInterval).Should(Succeed())

		By("the next template: the good image again")
		before = podUIDsByName(ctx, env)
		measure("fixing template → every member updated and Ready", func() {
			setEtcdImage(ctx, env, good, "fixed")
			// The broken member goes first; the others wait until its replacement serves (which takes far
			// longer than a poll), so at the first sight of its new pod they still run their old ones.
			Eventually(func() string { return podUIDsByName(ctx, env)[broken] }).
				WithTimeout(waitTimeout).WithPolling(pollInterval).ShouldNot(Equal(before[broken]))
			now := podUIDsByName(ctx, env)
			for name, uid := range before {
				if name != broken {
					Expect(now[name]).To(Equal(uid), "%s was replaced before the broken member %s", name, broken)
				}
			}
			Eventually(func(g Gomega) {
				sts := statefulSetOf(ctx, env, obj)
				pods := memberPods(ctx, env)
				g.Expect(pods).To(HaveLen(3))
				for name, pod := range pods {
					g.Expect(pod.Labels[appsv1.ControllerRevisionHashLabelKey]).To(Equal(sts.Status.UpdateRevision), name)
					g.Expect(health.PodReady(&pod)).To(BeTrue(), name)
				}
			}).WithTimeout(2 * waitTimeout).WithPolling(pollInterval).Should(Succeed())
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})

		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		fewest := serving.stop()
		fmt.Fprintf(GinkgoWriter, "writer: %d acknowledged, %d failed attempts, longest gap %s; fewest Ready members %d\n", len(acked), failures, gap, fewest)
		AddReportEntry("member pod update writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s; fewest Ready members %d", len(acked), failures, gap, fewest))
		Expect(fewest).To(BeNumerically(">=", 2), "Ready members never below the quorum of 3")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/podupdate/", 3, acked)
	})
})

func statefulSetOf(ctx context.Context, env *seedworkflow.Env, obj *druidv1alpha1.Etcd) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: druidv1alpha1.StatefulSetName(obj)}, sts)).To(Succeed())
	return sts
}

func etcdContainerImage(sts *appsv1.StatefulSet) string {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == "etcd" {
			return c.Image
		}
	}
	Fail("no etcd container in the StatefulSet's template")
	return ""
}

// setEtcdImage sets etcd-main's etcd image and a pod annotation naming the step, and asks for a reconcile.
func setEtcdImage(ctx context.Context, env *seedworkflow.Env, image, step string) {
	Eventually(func(g Gomega) {
		obj := getEtcd(ctx, env, etcd.RoleMain)
		obj.Spec.Etcd.Image = ptr.To(image)
		if obj.Spec.Annotations == nil {
			obj.Spec.Annotations = map[string]string{}
		}
		obj.Spec.Annotations["e2e.gardener-etcd/pod-update"] = step
		metav1SetAnnotation(obj, druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.OperationReconcile)
		g.Expect(env.Client.Update(ctx, obj)).To(Succeed())
	}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}

func metav1SetAnnotation(obj *druidv1alpha1.Etcd, key, value string) {
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[key] = value
}

func podUIDsByName(ctx context.Context, env *seedworkflow.Env) map[string]string {
	uids := map[string]string{}
	for name, pod := range memberPods(ctx, env) {
		uids[name] = string(pod.UID)
	}
	return uids
}

// eventsWithReason are the messages of the events on etcd-main with reason, oldest first.
func eventsWithReason(ctx context.Context, env *seedworkflow.Env, reason string) []string {
	list := &corev1.EventList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
	var events []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Etcd" && e.InvolvedObject.Name == etcd.Name(etcd.RoleMain) && e.Reason == reason {
			events = append(events, e)
		}
	}
	sortEventsByTime(events)
	var messages []string
	for _, e := range events {
		messages = append(messages, e.Message)
	}
	return messages
}

func sortEventsByTime(events []corev1.Event) {
	at := func(e corev1.Event) time.Time {
		if !e.EventTime.IsZero() {
			return e.EventTime.Time
		}
		return e.FirstTimestamp.Time
	}
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && at(events[j]).Before(at(events[j-1])); j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
}

// servingSampler counts etcd-main's member pods that are Ready and not terminating every half second.
type servingSampler struct {
	mu     sync.Mutex
	fewest int
	cancel context.CancelFunc
	done   chan struct{}
}

func sampleServingMembers(ctx context.Context, env *seedworkflow.Env) *servingSampler {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &servingSampler{fewest: -1, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			list := &corev1.PodList{}
			if err := env.Client.List(ctx, list, client.InNamespace(env.Namespace), client.MatchingLabels{
				druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: etcd.Name(etcd.RoleMain)}); err == nil {
				n := 0
				for i := range list.Items {
					if p := &list.Items[i]; p.DeletionTimestamp == nil && health.PodReady(p) {
						n++
					}
				}
				s.mu.Lock()
				if s.fewest < 0 || n < s.fewest {
					s.fewest = n
				}
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the fewest Ready members seen.
func (s *servingSampler) stop() int {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fewest
}

// imageRepository is ref without its tag or digest (a registry port stays).
func imageRepository(ref string) string {
	if at := strings.Index(ref, "@"); at >= 0 {
		ref = ref[:at]
	}
	if colon := strings.LastIndex(ref, ":"); colon > strings.LastIndex(ref, "/") {
		ref = ref[:colon]
	}
	return ref
}
