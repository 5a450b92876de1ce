package snapshotter

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/protobuf/proto"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// watchingSnapshotter is a snapshotter on a Local store whose watch is fed by hand (observe).
func watchingSnapshotter(t *testing.T) *Snapshotter {
	t.Helper()
	store, err := snapstore.New(t.Context(), snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp",
		Prefix: "p", LocalRoot: t.TempDir()}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	cfg := Default()
	cfg.Compression = snapshot.CompressionGzip
	s, err := New(Options{Config: cfg, Store: store, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// watchResponse is a watch response with one put per revision from first to last.
func watchResponse(first, last int64) *etcdserverpb.WatchResponse {
	resp := &etcdserverpb.WatchResponse{Header: &etcdserverpb.ResponseHeader{Revision: last}}
	for rev := first; rev <= last; rev++ {
		resp.Events = append(resp.Events, &mvccpb.Event{Type: mvccpb.PUT,
			Kv: &mvccpb.KeyValue{Key: []byte("k"), Value: []byte("v"), ModRevision: rev, CreateRevision: 1, Version: rev}})
	}
	return resp
}

// A watch response is buffered whole, and whoever waits for the watch is woken once it is.
func TestObserveBuffersAResponseAndWakesWaiters(t *testing.T) {
	s := watchingSnapshotter(t)
	s.bufMu.Lock()
	progress := s.progress
	s.bufMu.Unlock()
	s.observe(watchResponse(1, 50))
	select {
	case <-progress:
	default:
		t.Fatal("a waiter for the watch was not woken")
	}
	if got := s.WatchedRevision(); got != 50 {
		t.Fatalf("watched revision %d, want 50", got)
	}
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	if len(s.events) != 50 || s.events[0].ev.Kv.ModRevision != 1 || s.events[49].ev.Kv.ModRevision != 50 {
		t.Fatalf("%d events buffered, want revisions 1..50 in order", len(s.events))
	}
}

// The work per watch event is the append to the buffer; what is per response (waking waiters, the
// snapshot_required gauges) happens once per response, so that a busy etcd's stream of events costs the
// sidecar little besides receiving it. Allocations are counted, not time.
func TestObserveAllocatesPerResponseNotPerEvent(t *testing.T) {
	s := watchingSnapshotter(t)
	const perResponse = 100
	responses := make([]*etcdserverpb.WatchResponse, 200)
	for i := range responses {
		responses[i] = watchResponse(int64(i*perResponse+1), int64((i+1)*perResponse))
	}
	s.events = make([]bufferedEvent, 0, len(responses)*perResponse) // the buffer's growth is not the subject
	i := 0
	allocs := testing.AllocsPerRun(len(responses)-1, func() {
		s.observe(responses[i])
		i++
	})
	if allocs > 4 {
		t.Fatalf("%.0f allocations to buffer a response of %d events, want a few per response", allocs, perResponse)
	}
}

// The memory limit counts what the buffer holds: the buffered size of decoded watch events (as the
// watch delivers them: every event, key and value decoded into allocations of their own) is at least the
// heap they keep alive, whatever the size of the values.
func TestBufferedSizeCoversTheHeapOfTheEvents(t *testing.T) {
	for _, valueSize := range []int{0, 256, 4096} {
		s := watchingSnapshotter(t)
		wire := make([][]byte, 40)
		for i := range wire {
			resp := &etcdserverpb.WatchResponse{Header: &etcdserverpb.ResponseHeader{Revision: int64((i + 1) * 500)}}
			for rev := int64(i*500 + 1); rev <= int64((i+1)*500); rev++ {
				resp.Events = append(resp.Events, &mvccpb.Event{Kv: &mvccpb.KeyValue{Key: fmt.Appendf(nil, "/registry/configmaps/ns/key-%08d", rev),
					Value: make([]byte, valueSize), ModRevision: rev, CreateRevision: 1, Version: 2}})
			}
			var err error
			if wire[i], err = proto.Marshal(resp); err != nil {
				t.Fatal(err)
			}
		}
		before := liveHeap()
		for _, w := range wire {
			resp := &etcdserverpb.WatchResponse{}
			if err := proto.Unmarshal(w, resp); err != nil {
				t.Fatal(err)
			}
			s.observe(resp)
		}
		held := liveHeap() - before
		runtime.KeepAlive(wire) // its collection would offset the events' heap
		s.bufMu.Lock()
		counted := s.bufSize
		s.bufMu.Unlock()
		if counted < held {
			t.Errorf("values of %d bytes: %d events hold %d bytes of heap, the buffer counts %d", valueSize, len(s.events), held, counted)
		}
		runtime.KeepAlive(s)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
