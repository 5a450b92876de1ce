package sidecar

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
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

// decommissionSource follows the migration guide once target joined source: it waits until every target
// member's lease records its cluster, removes the source members from the joined cluster through
// targetCli and stops them. The joined cluster lives on with the target members alone.
func decommissionSource(t *testing.T, targetCli *clientv3.Client, target, source *cluster) {
	t.Helper()
	g := NewWithT(t)
	for _, p := range target.pods {
		g.Eventually(target.leaseHolder, time.Minute, 200*time.Millisecond).WithArguments(p.memberName(target.prefix)).ShouldNot(BeEmpty(),
			"member lease of %s", p.name)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	list, err := targetCli.MemberList(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range source.pods {
		for _, m := range list.Members {
			if m.Name == p.name {
				g.Eventually(func() error {
					_, err := targetCli.MemberRemove(ctx, m.ID)
					return err
				}, 30*time.Second, time.Second).Should(Succeed(), "removing source member %s", p.name)
			}
		}
		p.stop()
	}
}

// joinedEtcdWithoutItsSource is an Etcd of members (renewed leases) that joined a one-member source cluster
// holding oldKeys keys under old/ (want), after the source member left the joined cluster and stopped
// (decommissionSource). The source is returned for the endpoints it leaves behind (foreignClusterAt).
func joinedEtcdWithoutItsSource(t *testing.T, members, oldKeys int) (target *cluster, targetCli *clientv3.Client, source *cluster, want map[string]kv) {
	t.Helper()
	source = newEtcdCluster(t, "etcd-old", 1, "", nil)
	sourceCli := source.startAll()
	putRetrying(t, sourceCli, "old/", oldKeys)
	want, _ = allKeys(t, sourceCli)

	target = joiningCluster(t, source, members)
	target.renewMemberLeases()
	targetCli = target.startAll()
	var names []string // sorted, as expectJoined compares them
	for i := range members {
		names = append(names, fmt.Sprintf("etcd-new-%d", i))
	}
	names = append(names, "etcd-old-0")
	expectJoined(t, sourceCli, target, names, want)
	decommissionSource(t, targetCli, target, source)
	return target, targetCli, source, want
}

// foreignClusterAt starts a fresh one-member etcd (a cluster of its own, with its own cluster ID) that
// listens on the client URL of source's first member: what a decommissioned source's endpoints may serve
// later.
func foreignClusterAt(t *testing.T, source *cluster) *clientv3.Client {
	t.Helper()
	foreign := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "foreign-0", ClientURL: source.pods[0].client})
	return foreign.Client(t)
}

// memberNames lists the members of the cluster behind cli, sorted.
func memberNames(g Gomega, t *testing.T, cli *clientv3.Client) []string {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, m := range list.Members {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}

// TestReinitializingMemberRefusesAForeignClusterAtTheSourceEndpoints: a one-member Etcd joined a source
// cluster; the source members left the joined cluster and the source's client endpoint now serves a fresh
// etcd of another cluster. The Etcd's member loses its database and re-initializes while the source is
// still named in its spec: it must not join the cluster at the source endpoint (whose cluster ID is not
// the one its member lease recorded), and its data directory stays where it is.
func TestReinitializingMemberRefusesAForeignClusterAtTheSourceEndpoints(t *testing.T) {
	g := NewWithT(t)
	target, _, source, _ := joinedEtcdWithoutItsSource(t, 1, 20)
	foreignCli := foreignClusterAt(t, source)

	member := target.pods[0]
	member.stop()
	g.Expect(os.Truncate(etcddata.DBPath(member.dataDir), 100)).To(Succeed())
	member.start()
	g.Consistently(func(g Gomega) {
		g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
		g.Expect(member.ready()).To(BeFalse(), "the member serves no other cluster")
	}, 20*time.Second, time.Second).Should(Succeed())
	// The member waits for its own cluster for the initializer's quorum wait (3 minutes) before it fails.
	g.Eventually(member.sidecarLog.containing).WithArguments("Initialization failed", initializer.ErrForeignCluster.Error()).
		WithTimeout(4*time.Minute).WithPolling(time.Second).ShouldNot(BeEmpty(), "the initialization is refused because only another cluster answers")
	g.Expect(initializer.MovedAside(member.dataDir)).To(BeEmpty(), "nothing was moved aside")
	g.Expect(etcddata.WALDir(member.dataDir)).To(BeADirectory(), "the member's log stays in place")
}

// TestReinitializingMemberRejoinsItsOwnClusterNotTheOneAtTheSourceEndpoints: a three-member Etcd joined a
// source cluster, the source members left and the source's client endpoint now serves a fresh etcd of
// another cluster. A member whose volume is lost rejoins the Etcd's own cluster (through its own members),
// and the cluster at the source endpoint gets no member.
func TestReinitializingMemberRejoinsItsOwnClusterNotTheOneAtTheSourceEndpoints(t *testing.T) {
	g := NewWithT(t)
	target, targetCli, source, want := joinedEtcdWithoutItsSource(t, 3, 20)
	foreignCli := foreignClusterAt(t, source)

	wiped := target.pods[2]
	wiped.stop()
	g.Expect(os.RemoveAll(wiped.dataDir)).To(Succeed())
	wiped.start()
	g.Eventually(wiped.ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue())
	expectJoined(t, targetCli, target, []string{"etcd-new-0", "etcd-new-1", "etcd-new-2"}, want)
	g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
}

// TestWokenUpJoinedEtcdNeverJoinsAForeignClusterAtTheSourceEndpoints: a three-member Etcd joined a source
// cluster, the source members left and the source's client endpoint now serves a fresh etcd of another
// cluster. The Etcd is hibernated (all pods stop) and its member leases are recreated empty, as a wake-up
// finds them. Its first member starts while its peers are still down: nothing records the Etcd's cluster
// and none of its own members answers, but its valid data tells its cluster. Its node had failed, so its
// wrapper asks for a full initialization, not the sanity check of a clean stop. It must neither move that
// data aside nor join the cluster at the source endpoint; once its peers start, the Etcd serves all its
// keys again.
func TestWokenUpJoinedEtcdNeverJoinsAForeignClusterAtTheSourceEndpoints(t *testing.T) {
	g := NewWithT(t)
	target, targetCli, foreignCli, want := hibernatedJoinedEtcd(t)

	// The first member's node failed before the hibernation stopped its pod: its wrapper finds no clean
	// exit and asks for a full initialization, which asks the other members.
	first := target.pods[0]
	g.Expect(os.Remove(filepath.Join(first.wrapper.MarkerDir, wrapper.CleanExitMarker))).To(Succeed())
	first.start()
	g.Eventually(first.sidecarLog.containing).WithArguments("Initialization done", "6 non-quorate, valid data").
		WithTimeout(time.Minute).ShouldNot(BeEmpty(), "the first member reuses its valid data")
	g.Consistently(func(g Gomega) {
		g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
		g.Expect(initializer.MovedAside(first.dataDir)).To(BeEmpty(), "the valid data stays in place")
	}, 10*time.Second, time.Second).Should(Succeed())

	for _, p := range target.pods[1:] {
		p.start()
	}
	for _, p := range target.pods {
		g.Eventually(p.ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue(), p.name)
	}
	expectJoined(t, targetCli, target, []string{"etcd-new-0", "etcd-new-1", "etcd-new-2"}, want)
	g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
}

// TestWokenUpJoinedEtcdMemberWithoutDataWaitsForItsOwnMembers: as above, but the first member to start
// after the wake-up lost its volume. Its member leases, recreated empty, carry only druid's mark that the
// Etcd joined its source cluster before: nothing tells the member its Etcd's cluster, and the one
// answering at the source's endpoint is not taken for it (as a first join would). It waits; once its
// peers serve, it joins their cluster as a learner and serves all keys.
func TestWokenUpJoinedEtcdMemberWithoutDataWaitsForItsOwnMembers(t *testing.T) {
	g := NewWithT(t)
	target, targetCli, foreignCli, want := hibernatedJoinedEtcd(t, druidv1alpha1.JoinedExistingClusterAnnotation)

	wiped := target.pods[0]
	g.Expect(os.RemoveAll(wiped.dataDir)).To(Succeed())
	wiped.start()
	g.Eventually(wiped.sidecarLog.containing).WithArguments("Not asking or joining the cluster", "joined its source cluster before").
		WithTimeout(time.Minute).ShouldNot(BeEmpty(), "the cluster at the source endpoint is not taken for the Etcd's")
	g.Consistently(func(g Gomega) {
		g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
		g.Expect(wiped.ready()).To(BeFalse(), "the member serves no other cluster")
	}, 10*time.Second, time.Second).Should(Succeed())

	for _, p := range target.pods[1:] {
		p.start()
	}
	for _, p := range target.pods {
		g.Eventually(p.ready, 5*time.Minute, 200*time.Millisecond).Should(BeTrue(), p.name)
	}
	expectJoined(t, targetCli, target, []string{"etcd-new-0", "etcd-new-1", "etcd-new-2"}, want)
	g.Expect(memberNames(g, t, foreignCli)).To(Equal([]string{"foreign-0"}), "the foreign cluster got no member")
}

// hibernatedJoinedEtcd is a three-member Etcd that joined a one-member source cluster, after the source
// members left (keys old/ and new/ written, want holds them all) and a fresh etcd of another cluster took
// the source's client endpoint (foreignCli). All its pods are stopped and its member leases recreated
// empty, with marks, as a wake-up from hibernation finds them.
func hibernatedJoinedEtcd(t *testing.T, marks ...string) (target *cluster, targetCli, foreignCli *clientv3.Client, want map[string]kv) {
	t.Helper()
	target, targetCli, source, _ := joinedEtcdWithoutItsSource(t, 3, 10)
	putRetrying(t, targetCli, "new/", 10)
	want, _ = allKeys(t, targetCli)
	foreignCli = foreignClusterAt(t, source)

	for _, p := range target.pods {
		p.stop()
	}
	target.recreateMemberLeases(marks...)
	return target, targetCli, foreignCli, want
}
