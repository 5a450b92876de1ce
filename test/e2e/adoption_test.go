//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario: a landscape's etcd-main as upstream etcd-druid left it — its objects in the
// upstream shapes (createUpstreamObjects), three members running etcd 3.5 on Gardener's PVCs
// (`main-etcd-etcd-main-<i>`), taking writes — is handed to our druid (the Etcd had our druid's spec
// reconcile suspended, as an operator would while switching druids). Our druid adopts every object and
// rolls the StatefulSet once onto our images; each member's wrapper steps its etcd 3.5 data through 3.6 to
// 3.7 in place, one member at a time. Asserted: one pod replacement per member and no container restart,
// the PVCs kept, every member on etcd 3.7, every acknowledged write of a writer that ran throughout on
// every member, and the Etcd ready. The time per member and the writes are reported.
var _ = Describe("adoption", func() {
	It("adopts a cluster upstream druid created on etcd 3.5 and upgrades it in place", func(ctx SpecContext) {
		env := newShoot(ctx, "adoption", 0)
		name := etcd.Name(etcd.RoleMain)
		suspended := &druidv1alpha1.Etcd{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: env.Namespace,
				Annotations: map[string]string{druidv1alpha1.SuspendEtcdSpecReconcileAnnotation: "adoption e2e: upstream druid's Etcd"}},
			Spec: druidv1alpha1.EtcdSpec{Replicas: 3, Labels: map[string]string{"role": etcd.RoleMain},
				VolumeClaimTemplate: ptr.To(etcd.VolumeClaimTemplateName(etcd.RoleMain))},
		}
		Expect(env.Client.Create(ctx, suspended)).To(Succeed())
		main := etcd.New(env.Client, env.Namespace, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To(int32(3)), HighAvailability: true,
			BackupConfig: &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}, WaitTimeout: env.Timeout, WaitInterval: env.Interval})
		Eventually(func() error { return main.Deploy(ctx) }).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		obj := getEtcd(ctx, env, etcd.RoleMain)
		Expect(obj.Annotations).To(HaveKey(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation))
		Expect(obj.Status.ObservedGeneration).To(BeNil(), "our druid has not reconciled the spec")

		measure("etcd 3.5 cluster in the upstream shapes", func() {
			createUpstreamObjects(ctx, env, obj, env.Seed.Images()["etcd-wrapper"])
			Eventually(func(g Gomega) {
				sts := &appsv1.StatefulSet{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, sts)).To(Succeed())
				g.Expect(sts.Status.ReadyReplicas).To(Equal(int32(3)))
			}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		Expect(memberVersions(ctx, env)).To(HaveEach(HavePrefix("3.5.")))
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/adoption/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 50))
		before := memberPods(ctx, env)
		claims := claimUIDs(ctx, env)
		Expect(claims).To(HaveLen(3))
		for claim := range claims {
			Expect(claim).To(HavePrefix("main-etcd-etcd-main-"), "Gardener's PVC names")
		}

		handover := time.Now()
		measure("adoption: one rolling update, then every member on etcd 3.7", func() {
			patch := client.MergeFrom(obj.DeepCopy())
			delete(obj.Annotations, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation)
			Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())
			Eventually(func(g Gomega) {
				pods := memberPods(ctx, env)
				g.Expect(pods).To(HaveLen(3))
				for podName, p := range pods {
					g.Expect(p.UID).NotTo(Equal(before[podName].UID), "%s not replaced yet", podName)
				}
				g.Expect(memberVersions(ctx, env)).To(HaveEach(HavePrefix("3.7.")))
			}).WithContext(ctx).WithTimeout(2 * waitTimeout).WithPolling(pollInterval).Should(Succeed())
			Expect(main.Wait(ctx)).To(Succeed())
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})
		after := memberPods(ctx, env)
		acked, failures, longestGap := w.Stop()
		AddReportEntry("writes during the adoption", fmt.Sprintf("%d acknowledged, %d failed attempts, longest gap %s", len(acked), failures, longestGap))
		fmt.Fprintf(GinkgoWriter, "writes during the adoption: %d acknowledged, %d failed attempts, longest gap %s\n", len(acked), failures, longestGap)

		names := make([]string, 0, len(after))
		for podName := range after {
			names = append(names, podName)
		}
		sort.Strings(names)
		for _, podName := range names {
			p := after[podName]
			restarts := int32(0)
			for _, cs := range p.Status.ContainerStatuses {
				restarts += cs.RestartCount
			}
			ready := readySince(p)
			fmt.Fprintf(GinkgoWriter, "MEMBER %s: replaced %s after the handover, ready %s after its creation, %d container restarts\n",
				podName, p.CreationTimestamp.Sub(handover).Round(time.Second), ready.Sub(p.CreationTimestamp.Time).Round(time.Second), restarts)
			AddReportEntry("MEMBER "+podName, fmt.Sprintf("ready %s after its creation, %d container restarts",
				ready.Sub(p.CreationTimestamp.Time).Round(time.Second), restarts))
			Expect(restarts).To(BeZero(), "%s: the version steps restart etcd inside the wrapper, never the container", podName)
			Expect(p.Spec.Containers).To(ContainElement(HaveField("Name", "backup-restore")), "%s runs our pod template", podName)
		}
		Expect(claimUIDs(ctx, env)).To(Equal(claims), "the PVCs are upstream druid's, none replaced")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/adoption/", 3, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		for podName, p := range memberPods(ctx, env) {
			Expect(p.UID).To(Equal(after[podName].UID), "%s was replaced a second time", podName)
		}
	})
})

// memberPods are etcd-main's member pods by name.
func memberPods(ctx context.Context, env *seedworkflow.Env) map[string]corev1.Pod {
	list := &corev1.PodList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace), client.MatchingLabels{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: etcd.Name(etcd.RoleMain)})).To(Succeed())
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods
}

// claimUIDs are the namespace's PVCs by name.
func claimUIDs(ctx context.Context, env *seedworkflow.Env) map[string]types.UID {
	list := &corev1.PersistentVolumeClaimList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
	uids := map[string]types.UID{}
	for _, c := range list.Items {
		uids[c.Name] = c.UID
	}
	return uids
}

// memberVersions asks every member pod's etcd for its server version (an error text for one that does not
// answer).
func memberVersions(ctx context.Context, env *seedworkflow.Env) []string {
	ips, err := seedworkflow.MemberIPs(ctx, env, etcd.RoleMain)
	Expect(err).NotTo(HaveOccurred())
	var versions []string
	for _, ip := range ips {
		endpoint := "https://" + net.JoinHostPort(ip, strconv.Itoa(2379))
		cli, err := seedworkflow.EtcdClientFor(ctx, env, etcd.RoleMain, endpoint)
		if err != nil {
			versions = append(versions, err.Error())
			continue
		}
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := cli.Status(attempt, endpoint)
		cancel()
		_ = cli.Close()
		if err != nil {
			versions = append(versions, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		versions = append(versions, st.Version)
	}
	return versions
}

// readySince is when the pod last became Ready.
func readySince(p corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
