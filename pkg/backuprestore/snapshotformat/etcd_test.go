package snapshotformat

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// startEtcd runs a single-member embedded etcd for the test and returns a client to it.
func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	return etcdserver.Start(t).Client(t)
}

// writeWorkload makes a history with every kind of event a delta holds: puts, overwrites, deletes, a
// multi-key transaction and keys attached to a lease that is then revoked. It returns the revision
// before the workload and the revision after it.
func writeWorkload(ctx context.Context, t *testing.T, cli *clientv3.Client) (before, after int64) {
	t.Helper()
	start, err := cli.Get(ctx, "any")
	if err != nil {
		t.Fatal(err)
	}
	lease, err := cli.Grant(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	ops := []func() error{
		func() error { _, err := cli.Put(ctx, "/registry/a", "1"); return err },
		func() error { _, err := cli.Put(ctx, "/registry/a", "2"); return err },
		func() error {
			_, err := cli.Put(ctx, "/registry/leased", "x", clientv3.WithLease(lease.ID))
			return err
		},
		func() error { _, err := cli.Put(ctx, "/registry/bin", "\x00\xff\n\""); return err },
		func() error { _, err := cli.Delete(ctx, "/registry/a"); return err },
		func() error {
			_, err := cli.Txn(ctx).Then(clientv3.OpPut("/registry/t1", "a"), clientv3.OpPut("/registry/t2", "b")).Commit()
			return err
		},
		func() error { _, err := cli.Revoke(ctx, lease.ID); return err },
	}
	for i, op := range ops {
		if err := op(); err != nil {
			t.Fatalf("workload op %d: %v", i, err)
		}
	}
	end, err := cli.Get(ctx, "any")
	if err != nil {
		t.Fatal(err)
	}
	return start.Header.Revision, end.Header.Revision
}

// watchEvents collects the events of revisions from..to from a real watch.
func watchEvents(ctx context.Context, t *testing.T, cli *clientv3.Client, from, to int64) []*clientv3.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var events []*clientv3.Event
	for resp := range cli.Watch(ctx, "", clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			t.Fatalf("watch: %v", err)
		}
		events = append(events, resp.Events...)
		if n := len(events); n > 0 && events[n-1].Kv.ModRevision >= to {
			return events
		}
	}
	t.Fatalf("watch ended before revision %d: %v", to, ctx.Err())
	return nil
}
