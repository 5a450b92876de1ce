package snapshotter

import (
	"context"
	"fmt"
	"io"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// openSnapshot starts etcd's Maintenance.Snapshot stream and returns its bytes as a reader. It is what
// clientv3's Maintenance.Snapshot does, on the client's own connection (with its interceptors, so
// authentication and the like apply), minus costs that showed in BenchmarkFullSnapshot profiles:
//
//   - clientv3 copies every message through an io.Pipe to a reader on another goroutine; here the
//     reader receives the messages itself.
//   - etcd sends 32 KiB plus a few bytes per message, which arrives in several HTTP/2 frames; gRPC's
//     proto codec assembles those in a buffer of its shared pool, whose next size up is 1 MiB and which
//     clears the whole buffer on every use: 1 MiB cleared per 32 KiB received (about a tenth of the
//     pipeline's CPU). snapshotCodec assembles them in one buffer of the stream's own.
//   - proto.Unmarshal copies the blob into a new slice per message (an allocation of 32 KiB, a copy
//     and garbage to collect); snapshotCodec leaves the blob in its buffer (see there).
//
// The bytes are etcd's stream unchanged; its checksum is verified downstream as before.
func openSnapshot(ctx context.Context, cli *clientv3.Client) (*snapshotStream, error) {
	stream, err := pb.NewMaintenanceClient(cli.ActiveConnection()).Snapshot(ctx, &pb.SnapshotRequest{},
		grpc.ForceCodecV2(&snapshotCodec{}), grpc.WaitForReady(true))
	if err != nil {
		return nil, clientv3.ContextError(ctx, err)
	}
	return &snapshotStream{ctx: ctx, stream: stream}, nil
}

// snapshotStream reads the blobs of a snapshot stream in order; Read returns io.EOF after the last one.
type snapshotStream struct {
	ctx    context.Context
	stream pb.Maintenance_SnapshotClient
	rest   []byte
	// started is set once a message was asked for; err is what receiveFirst could not receive.
	started bool
	err     error
}

// receiveFirst receives the stream's first message ahead of Read (see expectedRevision); an error is kept
// for Read to return.
func (s *snapshotStream) receiveFirst() error {
	if s.started {
		return nil
	}
	s.started = true
	resp, err := s.stream.Recv()
	if err != nil {
		if err != io.EOF {
			err = clientv3.ContextError(s.ctx, err)
		}
		s.err = err
		return err
	}
	s.rest = resp.GetBlob()
	return nil
}

func (s *snapshotStream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.started = true
	for len(s.rest) == 0 {
		resp, err := s.stream.Recv()
		if err == io.EOF {
			return 0, io.EOF
		}
		if err != nil {
			return 0, clientv3.ContextError(s.ctx, err)
		}
		s.rest = resp.GetBlob()
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

// snapshotCodec is gRPC's proto codec with a private assembly buffer for the messages of one snapshot
// stream. gRPC decodes a message when the stream's Recv is called, one after the other, and
// snapshotStream.Read hands out a message's blob completely before it receives the next one; so the
// blob of a SnapshotResponse can stay in the buffer instead of being copied out of it: the blob field
// is cut out of the wire bytes and aliases the buffer until the next message is decoded, the other
// (small) fields go through proto.Unmarshal.
type snapshotCodec struct {
	buf    []byte // the message being decoded
	fields []byte // its fields other than the blob
}

var protoCodec = encoding.GetCodecV2("proto")

// blobField is the field number of SnapshotResponse.blob.
var blobField = (&pb.SnapshotResponse{}).ProtoReflect().Descriptor().Fields().ByName("blob").Number()

func (c *snapshotCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c *snapshotCodec) Unmarshal(data mem.BufferSlice, v any) error {
	resp, ok := v.(*pb.SnapshotResponse)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	n := data.Len()
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	data.CopyTo(c.buf)
	var blob []byte
	c.fields = c.fields[:0]
	for wire := c.buf; len(wire) > 0; {
		num, typ, tagLen := protowire.ConsumeTag(wire)
		if tagLen < 0 {
			return fmt.Errorf("snapshot stream: %w", protowire.ParseError(tagLen))
		}
		valLen := protowire.ConsumeFieldValue(num, typ, wire[tagLen:])
		if valLen < 0 {
			return fmt.Errorf("snapshot stream: %w", protowire.ParseError(valLen))
		}
		if num == blobField && typ == protowire.BytesType {
			blob, _ = protowire.ConsumeBytes(wire[tagLen:]) // the last occurrence wins, as in proto
		} else {
			c.fields = append(c.fields, wire[:tagLen+valLen]...)
		}
		wire = wire[tagLen+valLen:]
	}
	if err := proto.Unmarshal(c.fields, resp); err != nil {
		return err
	}
	resp.Blob = blob
	return nil
}

func (c *snapshotCodec) Name() string { return protoCodec.Name() }
