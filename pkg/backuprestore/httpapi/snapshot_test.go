package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// recordingSnapshotter answers with snapshots named after the calls it received.
type recordingSnapshotter struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingSnapshotter) record(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recordingSnapshotter) TakeFull(_ context.Context, final bool) (*snapshot.Snapshot, error) {
	r.record("full")
	return snapshot.NewFull(42, time.Unix(1700000000, 0), snapshot.CompressionNone, final), nil
}

func (r *recordingSnapshotter) TakeDelta(context.Context) (*snapshot.Snapshot, error) {
	r.record("delta")
	return snapshot.NewIncr(43, 50, time.Unix(1700000060, 0), snapshot.CompressionNone), nil
}

func (r *recordingSnapshotter) Latest(context.Context) (*LatestSnapshots, error) {
	r.record("latest")
	return &LatestSnapshots{
		FullSnapshot:   snapshot.NewFull(42, time.Unix(1700000000, 0), snapshot.CompressionNone, false),
		DeltaSnapshots: []*snapshot.Snapshot{snapshot.NewIncr(43, 50, time.Unix(1700000060, 0), snapshot.CompressionNone)},
	}, nil
}

type fixedLeader Leader

func (f fixedLeader) BackupLeader(context.Context) (Leader, error) { return Leader(f), nil }

func TestSnapshotsWithoutSnapshotterAnswer503(t *testing.T) {
	g := NewWithT(t)
	srv := newTestServer(t, Options{})
	for _, path := range []string{"/snapshot/full", "/snapshot/delta", "/snapshot/latest"} {
		code, _, body := get(t, srv.Client(), srv.URL+path)
		g.Expect(code).To(Equal(http.StatusServiceUnavailable), path)
		g.Expect(body).To(ContainSubstring("without a snapshotter"))
	}
}

func TestSnapshotsOnTheLeader(t *testing.T) {
	g := NewWithT(t)
	snaps := &recordingSnapshotter{}
	srv := newTestServer(t, Options{Snapshotter: snaps, Leader: fixedLeader{Self: true}})

	code, _, body := get(t, srv.Client(), srv.URL+"/snapshot/full?final=true")
	g.Expect(code).To(Equal(http.StatusOK))
	full := decode[snapshot.Snapshot](t, body)
	g.Expect(full.IsFinal).To(BeTrue())
	g.Expect(full.SnapName).To(Equal("Full-00000000-00000042-1700000000.final"))

	code, _, body = get(t, srv.Client(), srv.URL+"/snapshot/delta")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(decode[snapshot.Snapshot](t, body).LastRevision).To(Equal(int64(50)))

	code, _, body = get(t, srv.Client(), srv.URL+"/snapshot/latest")
	g.Expect(code).To(Equal(http.StatusOK))
	latest := decode[map[string]any](t, body)
	g.Expect(latest).To(HaveKey("fullSnapshot"))
	g.Expect(latest["deltaSnapshots"]).To(HaveLen(1))

	code, _, _ = get(t, srv.Client(), srv.URL+"/snapshot/full?final=maybe")
	g.Expect(code).To(Equal(http.StatusBadRequest))
	g.Expect(snaps.calls).To(Equal([]string{"full", "delta", "latest"}))

	// Upstream druid's EtcdOpsTask asks with POST, as the upstream sidecar allows.
	for _, path := range []string{"/snapshot/full?final=true", "/snapshot/delta"} {
		resp, err := srv.Client().Post(srv.URL+path, "", nil)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "POST %s", path)
	}
	resp, err := srv.Client().Post(srv.URL+"/snapshot/latest", "", nil)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed), "reading is a GET")
	g.Expect(snaps.calls).To(Equal([]string{"full", "delta", "latest", "full", "delta"}))
}

func TestFollowerForwardsSnapshotRequestsToTheLeader(t *testing.T) {
	g := NewWithT(t)
	leaderSnaps, followerSnaps := &recordingSnapshotter{}, &recordingSnapshotter{}
	leader := newTestServer(t, Options{Snapshotter: leaderSnaps, Leader: fixedLeader{Self: true}})
	follower := newTestServer(t, Options{Snapshotter: followerSnaps, Leader: fixedLeader{URL: leader.URL}})

	code, header, body := get(t, follower.Client(), follower.URL+"/snapshot/full?final=true")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(header.Get("Content-Type")).To(Equal("application/json"))
	g.Expect(decode[snapshot.Snapshot](t, body).IsFinal).To(BeTrue(), "the query reaches the leader")
	get(t, follower.Client(), follower.URL+"/snapshot/delta")
	g.Expect(leaderSnaps.calls).To(Equal([]string{"full", "delta"}))
	g.Expect(followerSnaps.calls).To(BeEmpty())

	// Two sidecars that each believe the other leads must not bounce a request between them.
	var a, b string
	bSrv := newTestServer(t, Options{Snapshotter: followerSnaps, Leader: leaderAt(&a)})
	aSrv := newTestServer(t, Options{Snapshotter: followerSnaps, Leader: leaderAt(&b)})
	a, b = aSrv.URL, bSrv.URL
	code, _, body = get(t, aSrv.Client(), aSrv.URL+"/snapshot/full")
	g.Expect(code).To(Equal(http.StatusServiceUnavailable))
	g.Expect(body).To(ContainSubstring("not the backup leader"))

	gone := newTestServer(t, Options{})
	gone.Close()
	orphan := newTestServer(t, Options{Leader: fixedLeader{URL: gone.URL}})
	code, _, _ = get(t, orphan.Client(), orphan.URL+"/snapshot/latest")
	g.Expect(code).To(Equal(http.StatusBadGateway))
}

type pointerLeader struct{ url *string }

func (p pointerLeader) BackupLeader(context.Context) (Leader, error) { return Leader{URL: *p.url}, nil }

func leaderAt(url *string) LeaderResolver { return pointerLeader{url} }

// A follower relays the backup leader's 429 with its Retry-After, so that a rate-limited caller learns
// when to come back whichever member it reached.
func TestFollowerRelaysTheLeadersRetryAfter(t *testing.T) {
	g := NewWithT(t)
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "120")
		http.Error(w, "too many", http.StatusTooManyRequests)
	}))
	t.Cleanup(leader.Close)
	follower := newTestServer(t, Options{Snapshotter: &recordingSnapshotter{}, Leader: fixedLeader{URL: leader.URL}})
	code, header, _ := get(t, follower.Client(), follower.URL+"/snapshot/full?final=true")
	g.Expect(code).To(Equal(http.StatusTooManyRequests))
	g.Expect(header.Get("Retry-After")).To(Equal("120"))
}

// A forwarded request that did not reach the backup leader (its name not resolved yet: the seed's DNS
// caches an unknown name for 30 s) is sent again, a second apart, and reaches it once; an answer of the
// leader, even an error, is not asked for twice.
func TestFollowerSendsAgainWhatDidNotReachTheLeader(t *testing.T) {
	g := NewWithT(t)
	var leaderCalls atomic.Int32
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaderCalls.Add(1)
		if r.URL.Path == "/snapshot/full" {
			http.Error(w, "store unavailable", http.StatusInternalServerError)
			return
		}
		writeJSON(w, http.StatusOK, snapshot.Snapshot{})
	}))
	t.Cleanup(leader.Close)
	var dials atomic.Int32
	dialer := &net.Dialer{}
	transport := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) <= 5 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "server misbehaving", Name: "etcd-main-1.etcd-main-peer", IsTemporary: true}}
		}
		return dialer.DialContext(ctx, network, addr)
	}}
	follower := newTestServer(t, Options{Snapshotter: &recordingSnapshotter{}, Leader: fixedLeader{URL: leader.URL},
		ForwardClient: &http.Client{Transport: transport}})

	code, _, _ := get(t, follower.Client(), follower.URL+"/snapshot/delta")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(dials.Load()).To(Equal(int32(6)), "five dials failed, the sixth reached the leader")
	g.Expect(leaderCalls.Load()).To(Equal(int32(1)))

	code, _, _ = get(t, follower.Client(), follower.URL+"/snapshot/full")
	g.Expect(code).To(Equal(http.StatusInternalServerError))
	g.Expect(leaderCalls.Load()).To(Equal(int32(2)), "the leader's error is relayed, not asked for again")
}
