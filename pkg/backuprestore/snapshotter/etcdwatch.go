package snapshotter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// etcdWatch is a watch of every key on etcd's own gRPC watch stream, on the client's connection (with its
// interceptors and credentials). etcd sends a watcher that keeps up one response per revision; clientv3's
// watcher passes each through two goroutines of its own before the caller sees it, which cost about 3 µs
// per revision on the CPUs of the member being backed up. Here the caller receives the responses itself.
type etcdWatch struct {
	stream pb.Watch_WatchClient
	cancel context.CancelFunc
}

// openWatch watches every key from revision from on, with periodic progress notifications. With
// requireLeader etcd ends the watch when the member has no leader (the backup leader's watch: a member
// without one may be cut off from newer revisions); without it the watch reads whatever the member holds.
func openWatch(ctx context.Context, cli *clientv3.Client, from int64, requireLeader bool) (*etcdWatch, error) {
	wctx, cancel := context.WithCancel(ctx)
	if requireLeader {
		wctx = clientv3.WithRequireLeader(wctx)
	}
	// The call options clientv3 gives its own calls: wait for the connection, and no limit on a response's
	// size below gRPC's own (a watcher that fell behind gets up to 1,000 revisions in one response, and
	// a value may be 1.5 MiB; gRPC's default limit is 4 MiB).
	stream, err := pb.NewWatchClient(cli.ActiveConnection()).Watch(wctx, grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(math.MaxInt32))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("opening a watch from revision %d: %w", from, rpctypes.Error(err))
	}
	w := &etcdWatch{stream: stream, cancel: cancel}
	create := &pb.WatchCreateRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: from, ProgressNotify: true}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: create}}); err != nil {
		if errors.Is(err, io.EOF) { // etcd ended the stream (no leader, say); its reason comes with the receive
			if _, recvErr := stream.Recv(); recvErr != nil {
				err = recvErr
			}
		}
		w.close()
		return nil, fmt.Errorf("creating a watch from revision %d: %w", from, rpctypes.Error(err))
	}
	created, err := w.next()
	if err != nil {
		w.close()
		return nil, fmt.Errorf("creating a watch from revision %d: %w", from, err)
	}
	if !created.Created {
		w.close()
		return nil, fmt.Errorf("creating a watch from revision %d: etcd answered with a response that does not confirm it", from)
	}
	return w, nil
}

// next receives the next response. A watch of a compacted revision ends with a *compactedError, one that
// etcd canceled with its reason.
func (w *etcdWatch) next() (*pb.WatchResponse, error) {
	resp, err := w.stream.Recv()
	if err != nil {
		return nil, rpctypes.Error(err)
	}
	if resp.CompactRevision != 0 {
		return nil, &compactedError{rev: resp.CompactRevision}
	}
	if resp.Canceled {
		return nil, fmt.Errorf("etcd canceled the watch: %s", resp.CancelReason)
	}
	return resp, nil
}

// close ends the watch.
func (w *etcdWatch) close() { w.cancel() }

// progressRevision is the revision up to which a progress notification says every event was sent, or 0
// when resp carries events or is no progress notification.
func progressRevision(resp *pb.WatchResponse) int64 {
	if len(resp.Events) > 0 || resp.Created || resp.Canceled || resp.CompactRevision != 0 || resp.Header == nil {
		return 0
	}
	return resp.Header.Revision
}
