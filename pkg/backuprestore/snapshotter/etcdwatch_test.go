package snapshotter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// A watcher that fell behind gets many revisions in one response: six values of 1 MiB arrive as one
// response of more than gRPC's default 4 MiB receive limit, which the watch must take as clientv3 does,
// also on the delta watch's own connection, whose flow-control window is 4 MiB.
func TestWatchTakesAResponseBeyondGRPCsDefaultLimit(t *testing.T) {
	member := etcdserver.Start(t)
	cli := member.Client(t)
	value := string(bytes.Repeat([]byte("v"), 1<<20))
	var first, last int64
	for i := range 6 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("big-%d", i), value)
		if err != nil {
			t.Fatal(err)
		}
		last = resp.Header.Revision
		if i == 0 {
			first = last
		}
	}
	watchCli, err := clientv3.New(clientv3.Config{Endpoints: member.Endpoints(), DialTimeout: 5 * time.Second,
		DialOptions: WatchDialOptions(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer watchCli.Close()
	for name, cli := range map[string]*clientv3.Client{"client": cli, "delta watch client": watchCli} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a watch that delivers nothing fails the test
		defer cancel()
		w, err := openWatch(ctx, cli, first, true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		var received int64
		largest := 0
		for received < last-first+1 {
			resp, err := w.next()
			if err != nil {
				t.Fatalf("%s, after %d events: %v", name, received, err)
			}
			received += int64(len(resp.Events))
			largest = max(largest, len(resp.Events))
		}
		if largest < 5 {
			t.Fatalf("%s: the largest response held %d events of 1 MiB; the test needs one beyond 4 MiB", name, largest)
		}
	}
}

// A watch of a compacted revision ends with the compaction, so that the snapshotter takes a full
// snapshot instead.
func TestWatchOfACompactedRevisionReportsTheCompaction(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	var last int64
	for i := range 3 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("k-%d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = resp.Header.Revision
	}
	if _, err := cli.Compact(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := openWatch(ctx, cli, last-1, true)
	if err == nil {
		defer w.close()
		_, err = w.next()
	}
	var compacted *compactedError
	if !errors.As(err, &compacted) || compacted.rev != last {
		t.Fatalf("watch from a compacted revision: %v, want the compaction at revision %d", err, last)
	}
}
