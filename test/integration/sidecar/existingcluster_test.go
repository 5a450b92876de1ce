package sidecar

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// joiningCluster is an Etcd "etcd-new" of n pods whose spec.etcd.bootstrapWithExistingCluster names the
// running members of source.
func joiningCluster(t *testing.T, source *cluster, n int) *cluster {
	t.Helper()
	join := &druidv1alpha1.BootstrapWithExistingCluster{}
	for _, p := range source.pods {
		join.Members = append(join.Members, druidv1alpha1.BootstrapExistingMember{Name: p.name, PeerURLs: []string{p.peer.String()}})
		join.ClientEndpoints = append(join.ClientEndpoints, p.client.String())
	}
	return newEtcdCluster(t, "etcd-new", n, "", join)
}

// localKeys reads every key from the member behind cli alone (a serializable read is answered from its
// own data).
func localKeys(ctx context.Context, cli *clientv3.Client) (map[string]kv, error) {
	resp, err := cli.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithSerializable())
	if err != nil {
		return nil, err
	}
	out := map[string]kv{}
	for _, k := range resp.Kvs {
		out[string(k.Key)] = kv{Value: string(k.Value), CreateRevision: k.CreateRevision, ModRevision: k.ModRevision, Version: k.Version}
	}
	return out, nil
}

// expectJoined waits until the membership is exactly want, every member voting, and every target member
// serves the keys of want from its own data.
func expectJoined(t *testing.T, cli *clientv3.Client, target *cluster, wantMembers []string, wantKeys map[string]kv) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		list, err := cli.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, m := range list.Members {
			g.Expect(m.IsLearner).To(BeFalse(), "member %s is still a learner", m.Name)
			names = append(names, m.Name)
		}
		slices.Sort(names)
		g.Expect(names).To(Equal(wantMembers))
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
	for _, p := range target.pods {
		local := etcdserver.NewClient(t, p.client.String())
		g.Eventually(func() (map[string]kv, error) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			return localKeys(ctx, local)
		}, time.Minute, 200*time.Millisecond).Should(Equal(wantKeys), p.name)
	}
}

// TestEtcdJoinsAnExistingCluster: a one-member source Etcd runs and holds keys; a new two-member Etcd whose
// spec.etcd.bootstrapWithExistingCluster names it starts through our sidecar and wrapper. Each of its
// members is added to the source cluster as a learner through the source's client endpoint, starts with
// state existing and the source members in its initial-cluster, and is promoted: the membership holds all
// three voting members, every key of the source is read from each new member's own data, and writes
// through the new members reach the source member.
func TestEtcdJoinsAnExistingCluster(t *testing.T) {
	g := NewWithT(t)
	source := newEtcdCluster(t, "etcd-old", 1, "", nil)
	sourceCli := source.startAll()
	putRetrying(t, sourceCli, "old/", 50)
	want, _ := allKeys(t, sourceCli)

	target := joiningCluster(t, source, 2)
	targetCli := target.startAll()
	expectJoined(t, sourceCli, target, []string{"etcd-new-0", "etcd-new-1", "etcd-old-0"}, want)

	putRetrying(t, targetCli, "new/", 5)
	g.Eventually(func() (map[string]kv, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		return localKeys(ctx, etcdserver.NewClient(t, source.pods[0].client.String()))
	}, time.Minute, 200*time.Millisecond).Should(HaveLen(len(want)+5), "writes through the new members reach the source")
}

// TestJoiningEtcdWaitsForTheSource: the new Etcd's member starts while the source does not answer. It
// neither bootstraps a cluster of its own nor takes the data of one: once the source serves again, the
// member joins it and serves the source's keys.
func TestJoiningEtcdWaitsForTheSource(t *testing.T) {
	source := newEtcdCluster(t, "etcd-old", 1, "", nil)
	sourceCli := source.startAll()
	putRetrying(t, sourceCli, "old/", 20)
	want, _ := allKeys(t, sourceCli)
	source.pods[0].stop()

	target := joiningCluster(t, source, 1)
	target.pods[0].start()
	NewWithT(t).Consistently(target.pods[0].ready, 10*time.Second, 500*time.Millisecond).Should(BeFalse(),
		"no member serves before it could join the source")

	source.pods[0].start()
	NewWithT(t).Eventually(target.pods[0].ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue())
	expectJoined(t, sourceCli, target, []string{"etcd-new-0", "etcd-old-0"}, want)
}
