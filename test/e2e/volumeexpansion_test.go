//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// A running 3-member etcd gets larger volumes: the operator raises the capacity through the Gardener side
// (10Gi → 12Gi; Gardener's quota of 8Gi must fit below it), druid raises every member's PVC, and the local
// seed's storage grows each volume online, as a CSI driver with online expansion does. No member restarts
// or moves, and the StatefulSet is created again with the larger claim template for members added later.
// A writer runs throughout; nothing it was told is written gets lost.
var _ = Describe("volume expansion", func() {
	It("grows the volumes of a running 3-member etcd from 10Gi to 12Gi", func(ctx SpecContext) {
		env := newShoot(ctx, "volumes", 0)
		deploy := func(capacity string) {
			values := etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailability: true, StorageCapacity: ptr.To(resource.MustParse(capacity)),
				BackupConfig: &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}, DeltaSnapshotPeriod: env.DeltaSnapshotPeriod,
				WaitTimeout: env.Timeout, WaitInterval: env.Interval}
			c := etcd.New(env.Client, env.Namespace, values)
			Expect(c.Deploy(ctx)).To(Succeed())
			Expect(c.Wait(ctx)).To(Succeed())
		}
		measure("bootstrap 3 members on 10Gi volumes", func() {
			deploy("10Gi")
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})
		Expect(volumeSizes(ctx, env)).To(HaveEach(BeNumerically("==", 10<<30)))
		pods := memberPods(ctx, env)
		claims := claimUIDs(ctx, env)
		restarts := trackRestarts(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/volumes/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 20))

		measure("10Gi → 12Gi on the running members", func() {
			deploy("12Gi")
			Eventually(func(g Gomega) {
				g.Expect(volumeSizes(ctx, env)).To(HaveLen(3))
				g.Expect(volumeSizes(ctx, env)).To(HaveEach(BeNumerically("==", 12<<30)))
				list := &corev1.PersistentVolumeClaimList{}
				g.Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
				for _, pvc := range list.Items {
					capacity := pvc.Status.Capacity[corev1.ResourceStorage]
					g.Expect(capacity.Cmp(resource.MustParse("12Gi"))).To(BeZero(), "PVC %s reports %s", pvc.Name, capacity.String())
				}
				sts := statefulSet(ctx, env, etcd.RoleMain)
				template := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
				g.Expect(template.Cmp(resource.MustParse("12Gi"))).To(BeZero(), "claim template of the StatefulSet")
			}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		total, detail := restarts.stop()
		AddReportEntry("volume expansion writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s; member restarts %d (%s)", len(acked), failures, gap, total, detail))

		Expect(total).To(BeZero(), "member restarts: %s", detail)
		for name, p := range memberPods(ctx, env) {
			Expect(p.UID).To(Equal(pods[name].UID), "pod %s was replaced", name)
		}
		Expect(claimUIDs(ctx, env)).To(Equal(claims), "the members keep their PVCs")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/volumes/", 3, acked)
	})
})

// volumeSizes are the sizes of the file systems behind the namespace's bound PVCs, as the members see them
// (the local seed's volumes are directories on this host).
func volumeSizes(ctx context.Context, env *seedworkflow.Env) []int64 {
	list := &corev1.PersistentVolumeClaimList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
	var sizes []int64
	for _, pvc := range list.Items {
		if pvc.Spec.VolumeName == "" {
			continue
		}
		pv := &corev1.PersistentVolume{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
		Expect(pv.Spec.Local).NotTo(BeNil(), "PV %s", pv.Name)
		var fs unix.Statfs_t
		Expect(unix.Statfs(pv.Spec.Local.Path, &fs)).To(Succeed())
		sizes = append(sizes, int64(fs.Blocks)*int64(fs.Bsize))
	}
	return sizes
}
