package scaledown

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// startNamed starts n members named like StatefulSet pods.
func startNamed(t *testing.T, n int) []*etcdserver.Member {
	cfgs := make([]etcdserver.MemberConfig, n)
	var initial []string
	for i := range cfgs {
		cfgs[i] = etcdserver.MemberConfig{Name: fmt.Sprintf("etcd-main-%d", i), ClientURL: etcdserver.FreeURL(t), PeerURL: etcdserver.FreeURL(t)}
		initial = append(initial, cfgs[i].Name+"="+cfgs[i].PeerURL.String())
	}
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
	}
	return etcdserver.StartMembers(t, cfgs...)
}

func opts(t *testing.T, local *etcdserver.Member, size int) Options {
	return Options{Client: local.Client(t), ClusterSize: func() (int, error) { return size, nil },
		LocalMemberID: uint64(local.Etcd.Server.MemberID()), Log: testr.New(t)}
}

func names(t *testing.T, local *etcdserver.Member) []string {
	resp, err := local.Client(t).MemberList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range resp.Members {
		out = append(out, m.GetName())
	}
	slices.Sort(out)
	return out
}

// 5 → 3: the StatefulSet deleted pods 4 and 3; their members are removed, highest ordinal first, and
// the cluster keeps serving writes. Each removal is timed as etcdbr_member_remove_duration_seconds.
func TestScaleDownFiveToThree(t *testing.T) {
	ms := startNamed(t, 5)
	ms[4].Stop()
	ms[3].Stop()
	registry := prometheus.NewPedanticRegistry()
	o := opts(t, ms[0], 3)
	o.Metrics = member.NewMetrics(registry)
	removed, err := Cleanup(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0].Name != "etcd-main-4" || removed[1].Name != "etcd-main-3" {
		t.Fatalf("removed %+v", removed)
	}
	if got := names(t, ms[0]); !slices.Equal(got, []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"}) {
		t.Fatalf("members %v", got)
	}
	for outcome, want := range map[string]uint64{"true": 2, "false": 0} {
		if got := metricstest.Count(t, registry, "etcdbr_member_remove_duration_seconds", map[string]string{"succeeded": outcome}); got != want {
			t.Errorf("etcdbr_member_remove_duration_seconds{succeeded=%q} observed %d removals, want %d", outcome, got, want)
		}
	}
	if _, err := ms[1].Client(t).Put(t.Context(), "k", "v"); err != nil {
		t.Fatalf("write after scale-down: %v", err)
	}
	// Nothing left to do.
	if removed, err := Cleanup(t.Context(), opts(t, ms[0], 3)); err != nil || len(removed) != 0 {
		t.Fatalf("second run removed %+v, %v", removed, err)
	}
}

// 3 → 1 while the pods still run: members 2 and 1 are removed, never the local member.
func TestScaleDownThreeToOne(t *testing.T) {
	ms := startNamed(t, 3)
	var removed []Removal
	deadline := time.Now().Add(30 * time.Second)
	for len(removed) < 2 && time.Now().Before(deadline) {
		r, err := Cleanup(t.Context(), opts(t, ms[0], 1))
		if err != nil {
			t.Fatal(err)
		}
		removed = append(removed, r...)
		time.Sleep(200 * time.Millisecond) // the next run of the leader's period
	}
	if len(removed) != 2 || removed[0].Name != "etcd-main-2" {
		t.Fatalf("removed %+v", removed)
	}
	if got := names(t, ms[0]); !slices.Equal(got, []string{"etcd-main-0"}) {
		t.Fatalf("members %v", got)
	}
	if _, err := ms[0].Client(t).Put(t.Context(), "k", "v"); err != nil {
		t.Fatalf("write on the single member: %v", err)
	}
}

// Removals that would lose quorum, and the local member, are refused.
func TestScaleDownGuards(t *testing.T) {
	ms := startNamed(t, 3)
	// The local member is etcd-main-2 itself: it is superfluous for size 2 but never removes itself.
	if removed, err := Cleanup(t.Context(), opts(t, ms[2], 2)); err != nil || len(removed) != 0 {
		t.Fatalf("local member: removed %+v, %v", removed, err)
	}
	// etcd-main-1 is down: removing etcd-main-2 would leave {0, 1} with one healthy member.
	ms[1].Stop()
	if removed, err := Cleanup(t.Context(), opts(t, ms[0], 2)); err != nil || len(removed) != 0 {
		t.Fatalf("quorum: removed %+v, %v", removed, err)
	}
	if got := names(t, ms[0]); len(got) != 3 {
		t.Fatalf("members %v", got)
	}
}

// A scale-up to 4 abandoned before the new member's etcd ran leaves a learner that never started in the
// membership. etcd admits one learner at a time, so it would keep every later rejoin (a member whose
// volume was lost) waiting: the leader removes it once the cluster size is 3 again. A learner that never
// started within the size is another member's join in progress and stays.
func TestScaleDownRemovesTheLearnerOfAnAbandonedScaleUp(t *testing.T) {
	ms := startNamed(t, 3)
	cli := ms[0].Client(t)
	// etcd refuses membership changes while its members' connections are younger than 5 s.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cli.MemberAddAsLearner(t.Context(), []string{"http://etcd-main-3.etcd-main-peer.shoot.svc:2380"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("adding the learner: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if removed, err := Cleanup(t.Context(), opts(t, ms[0], 4)); err != nil || len(removed) != 0 {
		t.Fatalf("within the size: removed %+v, %v", removed, err)
	}
	removed, err := Cleanup(t.Context(), opts(t, ms[0], 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Name != "etcd-main-3" {
		t.Fatalf("removed %+v, want the learner etcd-main-3", removed)
	}
	resp, err := cli.MemberList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range resp.Members {
		if m.GetIsLearner() {
			t.Fatalf("learner %v still in the membership", m.GetPeerURLs())
		}
	}
	if len(resp.Members) != 3 {
		t.Fatalf("%d members, want 3", len(resp.Members))
	}
}
