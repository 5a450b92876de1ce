package sidecar

import (
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

type bareWatchParams struct{ Endpoint string }

type bareWatchResult struct{ Events int64 }

// runBareWatchChild watches every key from the current revision on etcd's own gRPC stream and only counts
// what arrives, until stdin closes: the least a delta snapshotter that receives as ours does (on a
// connection dialed with snapshotter.WatchDialOptions) can cost the writers, since etcd sends one response
// per revision to a watcher that keeps up and somebody has to receive it. It leaves out what clientv3's
// watcher adds (its goroutine hand-offs cost about 3 µs per revision here) so that the floor is etcd's and
// gRPC's alone.
func runBareWatchChild(t *testing.T) {
	var p bareWatchParams
	childParams(t, &p)
	cli := watchClient(t, p.Endpoint)
	stream, err := pb.NewWatchClient(cli.ActiveConnection()).Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	everyKey := &pb.WatchCreateRequest{Key: []byte{0}, RangeEnd: []byte{0}}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: everyKey}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); err != nil || !resp.Created {
		t.Fatalf("watch not created: %v, %v", resp, err)
	}
	ended := make(chan streamEnd, 1)
	go func() {
		var events int64
		for {
			resp, err := stream.Recv()
			if err != nil {
				ended <- streamEnd{events: events, err: err}
				return
			}
			events += int64(len(resp.Events))
		}
	}()
	report(tagReady, struct{}{})
	waitForStdinEOF()
	select {
	case e := <-ended:
		// A count cut short would pass for a cheap watcher.
		t.Fatalf("the watch stream ended before the phase did, after %d events: %v", e.events, e.err)
	default:
	}
	_ = stream.CloseSend()
	cli.Close()
	report(tagResult, bareWatchResult{Events: (<-ended).events})
}

// streamEnd is how a watch stream ended: the events counted until then and the receive's error.
type streamEnd struct {
	events int64
	err    error
}
