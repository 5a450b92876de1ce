package scaledown

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// fakeLeases are member leases in memory, as the sidecars renewed them.
type fakeLeases struct {
	mu     sync.Mutex
	leases map[string]*LeaseState
}

func leasesOf(ms []*etcdserver.Member) *fakeLeases {
	f := &fakeLeases{leases: map[string]*LeaseState{}}
	for _, m := range ms {
		f.leases[m.Config.Name] = &LeaseState{HolderMemberID: strconv.FormatUint(uint64(m.Etcd.Server.MemberID()), 16)}
	}
	return f
}

func (f *fakeLeases) Get(_ context.Context, name string) (LeaseState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[name]
	if !ok {
		return LeaseState{}, ErrLeaseNotFound
	}
	return *l, nil
}

func (f *fakeLeases) SetLeft(_ context.Context, name, memberID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases[name].Left = memberID
	return nil
}

func (f *fakeLeases) left(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leases[name].Left
}

// raftLeader is the running member that leads, whose sidecar is the backup leader.
func raftLeader(t *testing.T, ms []*etcdserver.Member, gone map[string]bool) *etcdserver.Member {
	t.Helper()
	for _, m := range ms {
		if gone[m.Config.Name] || m.Stopped() {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		st, err := m.Client(t).Status(ctx, m.Endpoint())
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	return nil
}

// 3 → 1 while every pod runs, the way druid does it now: the template shrinks while all three members
// serve, the backup leader is etcd-main-2 (itself superfluous), and writes go on throughout. Member 1 is
// removed first, the leadership is handed to etcd-main-0, whose sidecar removes etcd-main-2; both leases
// are marked with the removed member's ID, and every acknowledged write is on the survivor.
func TestScaleInThreeToOneWhileAllMembersRunAndTheLeaderIsSuperfluous(t *testing.T) {
	ms := startNamed(t, 3)
	leases := leasesOf(ms)
	ids := map[string]string{}
	for name, l := range leases.leases {
		ids[name] = l.HolderMemberID
	}
	// Make the superfluous etcd-main-2 the leader.
	if l := raftLeader(t, ms, nil); l != ms[2] {
		if _, err := l.Client(t).MoveLeader(t.Context(), uint64(ms[2].Etcd.Server.MemberID())); err != nil {
			t.Fatalf("moving the leadership to etcd-main-2: %v", err)
		}
	}
	if l := raftLeader(t, ms, nil); l != ms[2] {
		t.Fatalf("leader is %v, want etcd-main-2", l)
	}

	stopWriter := writeUntilStopped(t, ms)
	var size atomic.Int64
	size.Store(3)
	sizeNow := func() (int, error) { return int(size.Load()), nil }

	// The template still lists three members: nothing happens.
	o := Options{Client: ms[2].Client(t), ClusterSize: sizeNow, Leases: leases, LocalMemberID: uint64(ms[2].Etcd.Server.MemberID()), Log: testr.New(t)}
	if removed, err := Cleanup(t.Context(), o); err != nil || len(removed) != 0 {
		t.Fatalf("before the template shrank: removed %+v, %v", removed, err)
	}

	size.Store(1) // the kubelet refreshed the mounted ConfigMap
	gone := map[string]bool{}
	var order []string
	deadline := time.Now().Add(60 * time.Second)
	for len(names(t, ms[0])) > 1 && time.Now().Before(deadline) {
		leader := raftLeader(t, ms, gone)
		if leader == nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		o := Options{Client: leader.Client(t), ClusterSize: sizeNow, Leases: leases, LocalMemberID: uint64(leader.Etcd.Server.MemberID()), Log: testr.New(t)}
		removed, err := Cleanup(t.Context(), o)
		if err != nil {
			t.Logf("cleanup by %s: %v", leader.Config.Name, err)
		}
		for _, r := range removed {
			if r.Name == leader.Config.Name {
				t.Fatalf("the backup leader %s removed itself", r.Name)
			}
			gone[r.Name] = true
			order = append(order, r.Name)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := names(t, ms[0]); !slices.Equal(got, []string{"etcd-main-0"}) {
		t.Fatalf("members %v", got)
	}
	if !slices.Equal(order, []string{"etcd-main-1", "etcd-main-2"}) {
		t.Fatalf("removal order %v, want etcd-main-1 (by the leader etcd-main-2), then etcd-main-2 (by etcd-main-0)", order)
	}
	// The run that found the membership at one member marks the last lease too.
	if _, err := Cleanup(t.Context(), Options{Client: ms[0].Client(t), ClusterSize: sizeNow, Leases: leases,
		LocalMemberID: uint64(ms[0].Etcd.Server.MemberID()), Log: testr.New(t)}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd-main-1", "etcd-main-2"} {
		if got := leases.left(name); got != ids[name] {
			t.Errorf("lease %s marked %q, want its member ID %s", name, got, ids[name])
		}
	}
	if got := leases.left("etcd-main-0"); got != "" {
		t.Errorf("the survivor's lease is marked %q", got)
	}

	keys := stopWriter()
	if len(keys) == 0 {
		t.Fatal("no write was acknowledged during the scale-in")
	}
	survivor := ms[0].Client(t)
	for _, k := range keys {
		resp, err := survivor.Get(t.Context(), k)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("acknowledged write %s missing on the survivor: %v", k, err)
		}
	}
	t.Logf("%d acknowledged writes during the scale-in, all on the survivor; removal order %v", len(keys), order)
}

// writeUntilStopped writes keys through a client of all members until the returned function is called,
// which returns the keys whose writes were acknowledged.
func writeUntilStopped(t *testing.T, ms []*etcdserver.Member) func() []string {
	var endpoints []string
	for _, m := range ms {
		endpoints = append(endpoints, m.Endpoint())
	}
	cli := etcdserver.NewClient(t, endpoints...)
	ctx, cancel := context.WithCancel(t.Context())
	var acked []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			key := fmt.Sprintf("scale-in/%06d", i)
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := cli.Put(pctx, key, "v")
			pcancel()
			if err == nil {
				acked = append(acked, key)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() []string {
		cancel()
		<-done
		return acked
	}
}

// The removal rules without a cluster: which member is removed next, and which leases are marked.
func TestPickAndMarkRules(t *testing.T) {
	member := func(id uint64, name string, learner bool) *etcdserverpb.Member {
		return &etcdserverpb.Member{ID: id, Name: name, IsLearner: learner}
	}
	unstarted := func(id uint64, pod string) *etcdserverpb.Member {
		return &etcdserverpb.Member{ID: id, IsLearner: true, PeerURLs: []string{"https://" + pod + ".e-peer.shoot.svc:2380"}}
	}
	for _, tc := range []struct {
		name    string
		members []*etcdserverpb.Member
		size    int
		local   uint64
		want    string
	}{
		{"nothing beyond the size", []*etcdserverpb.Member{member(1, "e-0", false), member(2, "e-1", false), member(3, "e-2", false)}, 3, 1, ""},
		{"highest ordinal first", []*etcdserverpb.Member{member(1, "e-0", false), member(2, "e-1", false), member(3, "e-2", false)}, 1, 1, "e-2"},
		{"never the local member", []*etcdserverpb.Member{member(1, "e-0", false), member(2, "e-1", false), member(3, "e-2", false)}, 1, 3, "e-1"},
		{"the local member as the only superfluous one is handed over, not picked", []*etcdserverpb.Member{member(1, "e-0", false), member(3, "e-2", false)}, 1, 3, ""},
		{"a learner without a name or peer URL is left alone", []*etcdserverpb.Member{member(1, "e-0", false), member(4, "", true)}, 1, 1, ""},
		{"a learner that never started within the size is left to the member that added itself", []*etcdserverpb.Member{member(1, "e-0", false), member(2, "e-1", false), unstarted(4, "e-2")}, 3, 1, ""},
		{"a learner that never started beyond the size is an abandoned scale-up's", []*etcdserverpb.Member{member(1, "e-0", false), member(2, "e-1", false), member(3, "e-2", false), unstarted(4, "e-3")}, 3, 1, "e-3"},
		{"a learner that never started of another Etcd is not ours", []*etcdserverpb.Member{member(1, "e-0", false), unstarted(4, "other-3")}, 1, 1, ""},
		{"never the last member", []*etcdserverpb.Member{member(3, "e-2", false)}, 1, 1, ""},
		{"prefixed names", []*etcdserverpb.Member{member(1, "garden-e-0", false), member(2, "garden-e-1", false)}, 1, 1, "garden-e-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pick(tc.members, tc.size, tc.local)
			if name := memberName(got); name != tc.want {
				t.Fatalf("picked %q, want %q", name, tc.want)
			}
		})
	}

	t.Run("marks", func(t *testing.T) {
		leases := &fakeLeases{leases: map[string]*LeaseState{
			"e-0": {HolderMemberID: "1"},
			"e-1": {HolderMemberID: "2"},            // removed: marked with its ID
			"e-2": {HolderMemberID: "3", Left: "3"}, // in the membership again: a stale mark is cleared
			"e-3": {},                               // never renewed, not in the membership: never joined
			"e-4": {HolderMemberID: "9", Left: "9"}, // already marked
			"e-5": {HolderMemberID: "b", Left: "a"}, // joined again with a new ID since, then removed: marked anew
			"e-6": {},                               // never renewed, but a learner that has not started names its pod
		}}
		unstarted := &etcdserverpb.Member{ID: 7, IsLearner: true, PeerURLs: []string{"https://e-6.e-peer.shoot.svc:2380"}}
		members := []*etcdserverpb.Member{member(1, "e-0", false), member(3, "e-2", false), unstarted}
		if err := markLeases(t.Context(), Options{Leases: leases, LocalMemberID: 1, Log: testr.New(t)}, members, 1); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"e-0": "", "e-1": "2", "e-2": "", "e-3": druidv1alpha1.LeftClusterNeverJoined, "e-4": "9", "e-5": "b", "e-6": ""} {
			if got := leases.left(name); got != want {
				t.Errorf("lease %s marked %q, want %q", name, got, want)
			}
		}
		// The scale-in is undone (size 3 again): the marks below the size are cleared, so those members
		// may join anew.
		if err := markLeases(t.Context(), Options{Leases: leases, LocalMemberID: 1, Log: testr.New(t)}, members, 3); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"e-1": "", "e-2": "", "e-4": "9"} {
			if got := leases.left(name); got != want {
				t.Errorf("after the undo: lease %s marked %q, want %q", name, got, want)
			}
		}
	})
}
