package scaledown

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// TestMembersOfTheSourceClusterAreNeverSuperfluous: an Etcd that joined an existing cluster
// (spec.etcd.bootstrapWithExistingCluster) runs beside the source's members, whose names end in ordinals
// beyond its cluster size. Scaled in from 2 members to 1, its backup leader removes its own member
// etcd-main-1, and none of the source's: they are another Etcd's members.
func TestMembersOfTheSourceClusterAreNeverSuperfluous(t *testing.T) {
	memberNames := []string{"etcd-main-0", "etcd-main-1", "etcd-old-3", "etcd-old-4"}
	cfgs := make([]etcdserver.MemberConfig, len(memberNames))
	var initial []string
	for i, n := range memberNames {
		cfgs[i] = etcdserver.MemberConfig{Name: n, ClientURL: etcdserver.FreeURL(t), PeerURL: etcdserver.FreeURL(t)}
		initial = append(initial, n+"="+cfgs[i].PeerURL.String())
	}
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
	}
	ms := etcdserver.StartMembers(t, cfgs...)
	var removed []Removal
	deadline := time.Now().Add(30 * time.Second)
	for !slices.ContainsFunc(removed, func(r Removal) bool { return r.Name == "etcd-main-1" }) && time.Now().Before(deadline) {
		r, err := Cleanup(t.Context(), opts(t, ms[0], 1))
		if err != nil {
			t.Fatal(err)
		}
		removed = append(removed, r...)
		time.Sleep(200 * time.Millisecond) // the next run of the leader's period
	}
	if len(removed) != 1 || removed[0].Name != "etcd-main-1" {
		t.Fatalf("removed %+v, want only etcd-main-1", removed)
	}
	if got := names(t, ms[0]); !slices.Equal(got, []string{"etcd-main-0", "etcd-old-3", "etcd-old-4"}) {
		t.Fatalf("members %v, want the source's members kept", got)
	}
}
