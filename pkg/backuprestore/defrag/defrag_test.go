package defrag

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// On a 3-member cluster: followers first, leadership moved away before the old leader is
// defragmented (observed with Status right before its turn), every database smaller afterwards, and
// the snapshot callback runs once.
func TestFollowersFirstLeaderLastAfterMovingLeadership(t *testing.T) {
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	etcdserver.Fragment(t, cli)
	oldLeader := uint64(c.Leader().Etcd.Server.MemberID())

	var mu sync.Mutex
	var order []uint64
	var leaderAtTurn []uint64
	snapshots := 0
	res, err := Run(t.Context(), Options{
		Client: cli, Log: testr.New(t),
		BeforeDefragment: func(ctx context.Context, m Member) {
			st, err := cli.Status(ctx, m.Endpoint)
			if err != nil {
				t.Errorf("status of %s: %v", m.Name, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			order = append(order, m.ID)
			leaderAtTurn = append(leaderAtTurn, st.Leader)
		},
		AfterDefrag: func(context.Context) error { snapshots++; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[2] != oldLeader || order[0] == oldLeader || order[1] == oldLeader {
		t.Fatalf("order %x, old leader %x", order, oldLeader)
	}
	for i, id := range order {
		if leaderAtTurn[i] == id {
			t.Fatalf("member %x was the leader when it was defragmented", id)
		}
	}
	if res.MovedLeaderTo == 0 || res.MovedLeaderTo == oldLeader {
		t.Fatalf("leadership moved to %x", res.MovedLeaderTo)
	}
	for _, m := range res.Members {
		if m.DBSizeAfter >= m.DBSizeBefore {
			t.Fatalf("member %s: db size %d -> %d", m.Name, m.DBSizeBefore, m.DBSizeAfter)
		}
	}
	if snapshots != 1 {
		t.Fatalf("snapshot callback ran %d times", snapshots)
	}
	if _, err := cli.Put(t.Context(), "after", "defrag"); err != nil {
		t.Fatalf("write after defragmentation: %v", err)
	}
}

// With a member down nothing is defragmented.
func TestSkippedWhileAMemberIsDown(t *testing.T) {
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	etcdserver.Fragment(t, cli)
	for _, m := range c.Members {
		if m != c.Leader() {
			m.Stop()
			break
		}
	}
	called := false
	_, err := Run(t.Context(), Options{Client: cli, Log: testr.New(t), BeforeDefragment: func(context.Context, Member) { called = true }})
	if !errors.Is(err, ErrUnhealthy) || called {
		t.Fatalf("Run = %v, defragmented something: %v", err, called)
	}
}

// A single member is defragmented in place.
func TestSingleMemberInPlace(t *testing.T) {
	c := etcdserver.Start(t)
	cli := c.Client(t)
	etcdserver.Fragment(t, cli)
	res, err := Run(t.Context(), Options{Client: cli, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Members) != 1 || res.MovedLeaderTo != 0 || res.Members[0].DBSizeAfter >= res.Members[0].DBSizeBefore {
		t.Fatalf("result %+v", res)
	}
}

func TestKeepRejectsABadSchedule(t *testing.T) {
	if err := Keep(t.Context(), KeepOptions{Schedule: "every now and then"}); err == nil {
		t.Fatal("bad schedule accepted")
	}
}

// The schedule runs defragmentation (here every second) until its context ends.
func TestKeepRunsTheScheduleUntilCancelled(t *testing.T) {
	c := etcdserver.Start(t)
	ran := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Keep(ctx, KeepOptions{Schedule: "@every 1s", Defrag: Options{Client: c.Client(t), Log: testr.New(t),
			AfterDefrag: func(context.Context) error { ran <- struct{}{}; return nil }}})
	}()
	for range 2 {
		select {
		case <-ran:
		case <-time.After(30 * time.Second):
			t.Fatal("scheduled defragmentation did not run")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Keep did not return after cancellation")
	}
}

// NOSPACE does not postpone defragmentation (it is the remedy); any other alarm does.
func TestOnlyNoSpacePassesTheHealthCheck(t *testing.T) {
	c := etcdserver.Start(t)
	cli := c.Client(t)
	id := uint64(c.Members[0].Etcd.Server.MemberID())
	maintenance := etcdserverpb.NewMaintenanceClient(cli.ActiveConnection())
	for _, tc := range []struct {
		alarm    etcdserverpb.AlarmType
		postpone bool
	}{{etcdserverpb.AlarmType_NOSPACE, false}, {etcdserverpb.AlarmType_CORRUPT, true}} {
		if _, err := maintenance.Alarm(t.Context(), &etcdserverpb.AlarmRequest{Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: id, Alarm: tc.alarm}); err != nil {
			t.Fatal(err)
		}
		res, err := Run(t.Context(), Options{Client: cli, Log: testr.New(t)})
		if postponed := errors.Is(err, ErrUnhealthy); postponed != tc.postpone || (!postponed && (err != nil || len(res.Members) != 1)) {
			t.Fatalf("alarm %s: Run = %+v, %v; want postponed %v", tc.alarm, res, err, tc.postpone)
		}
	}
}
