//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// nospaceQuota is the quota the spec gives its members: small enough that a few hundred writes fill it.
var nospaceQuota = resource.MustParse("64Mi")

// nospaceValueSize is the size of one fill value: 256 KiB of random bytes, so that about 250 overwrites of a
// few keys fill the quota with history while the data in use stays at 1 MiB.
const nospaceValueSize = 256 << 10

// The classic full database: a 3-member etcd whose history fills its quota raises NOSPACE and refuses every
// write. The backup leader's sidecar compacts, defragments member by member and disarms the alarm; nobody
// touches the cluster. A writer records the acknowledged writes throughout, and every one of them (and the
// last acknowledged value of every fill key) survives.
var _ = Describe("NOSPACE", func() {
	It("recovers a 3-member etcd filled to its quota without a human", func(ctx SpecContext) {
		env := newShoot(ctx, "nospace", 0)
		measure("bootstrap 3 members", func() { deployMain(ctx, env, 3) })
		measure("quota "+nospaceQuota.String()+" rolled out", func() { setQuota(ctx, env, etcd.RoleMain, nospaceQuota) })

		ready := watchReadyMembers(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/nospace/w/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 20))

		cli, err := seedworkflow.EtcdClient(ctx, env, etcd.RoleMain)
		Expect(err).NotTo(HaveOccurred())
		defer cli.Close()

		lastFill, fills, fillErr := fillUntilNoSpace(ctx, cli)
		Expect(fillErr).To(MatchError(ContainSubstring("database space exceeded")))
		full := time.Now()
		acksAtNoSpace := w.AckedCount()
		fmt.Fprintf(GinkgoWriter, "NOSPACE after %d acknowledged fill writes of %d KiB (%d writer acks)\n", fills, nospaceValueSize>>10, acksAtNoSpace)

		measure("NOSPACE → writable, no human", func() {
			Eventually(func(g Gomega) {
				alarms, err := cli.AlarmList(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(alarms.Alarms).To(BeEmpty(), "alarms still active")
				_, err = cli.Put(ctx, "/e2e/nospace/probe", "writable")
				g.Expect(err).NotTo(HaveOccurred())
			}).WithContext(ctx).WithTimeout(2 * waitTimeout).WithPolling(5 * time.Second).Should(Succeed())
		})
		recovered := time.Since(full).Round(time.Second)
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAtNoSpace+20))
		acked, failures, gap := w.Stop()
		fewest, samples := ready.stop()
		AddReportEntry("NOSPACE recovery", fmt.Sprintf("writable again %s after NOSPACE; writer %d acknowledged, %d failed, longest gap %s; fewest ready members %d in %d samples",
			recovered, len(acked), failures, gap, fewest, samples))

		Expect(fewest).To(BeNumerically(">=", 2), "the recovery never takes quorum away")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/nospace/w/", 3, acked)
		for key, value := range lastFill {
			resp, err := cli.Get(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Kvs).To(HaveLen(1), "fill key %s", key)
			Expect(bytes.Equal(resp.Kvs[0].Value, value)).To(BeTrue(), "fill key %s holds its last acknowledged value", key)
		}
		status := memberStatuses(ctx, env, etcd.RoleMain)
		for endpoint, s := range status {
			Expect(s.DbSize).To(BeNumerically("<", nospaceQuota.Value()*9/10), "%s defragmented under 90 %% of its quota", endpoint)
		}
	})
})

// setQuota sets the Etcd's spec.etcd.quota, asks druid to reconcile and waits until every member runs with it.
func setQuota(ctx context.Context, env *seedworkflow.Env, role string, quota resource.Quantity) {
	obj := getEtcd(ctx, env, role)
	patch := client.MergeFrom(obj.DeepCopy())
	obj.Spec.Etcd.Quota = &quota
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations["gardener.cloud/operation"] = "reconcile"
	Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(getEtcd(ctx, env, role).Status.ObservedGeneration).To(HaveValue(BeNumerically(">=", obj.Generation)))
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
	waitRolledOut(ctx, env, role)
	Expect(seedworkflow.WaitMembers(ctx, env, role, 3, true)).To(Succeed())
}

// fillUntilNoSpace overwrites four keys with random values until a write is refused, and returns the last
// acknowledged value of each key, the number of acknowledged writes and the refusal. It gives up after twice
// the writes the quota could hold.
func fillUntilNoSpace(ctx context.Context, cli *clientv3.Client) (last map[string][]byte, acked int, err error) {
	last = map[string][]byte{}
	limit := int(2 * nospaceQuota.Value() / nospaceValueSize)
	for i := 0; i < limit; i++ {
		key := fmt.Sprintf("/e2e/nospace/fill/%d", i%4)
		value := make([]byte, nospaceValueSize)
		_, _ = rand.Read(value)
		putCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = cli.Put(putCtx, key, string(value))
		cancel()
		if err != nil {
			if strings.Contains(err.Error(), "database space exceeded") {
				return last, acked, err
			}
			delete(last, key) // a timeout may or may not have stored the value: until the next acknowledged write the key's value is unknown
			continue
		}
		last[key] = value
		acked++
	}
	return last, acked, fmt.Errorf("no NOSPACE after %d writes of %d bytes", limit, nospaceValueSize)
}

// memberStatuses is every member's endpoint status, by endpoint.
func memberStatuses(ctx context.Context, env *seedworkflow.Env, role string) map[string]*clientv3.StatusResponse {
	cli, err := seedworkflow.EtcdClient(ctx, env, role)
	Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	out := map[string]*clientv3.StatusResponse{}
	for _, endpoint := range cli.Endpoints() {
		s, err := cli.Status(ctx, endpoint)
		Expect(err).NotTo(HaveOccurred(), endpoint)
		out[endpoint] = s
	}
	return out
}
