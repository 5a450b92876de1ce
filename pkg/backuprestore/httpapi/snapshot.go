package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// HeaderForwardedBy marks a snapshot request one sidecar forwarded to the backup leader. A sidecar that
// receives a forwarded request but is not the leader (leadership moved meanwhile) answers 503 instead of
// forwarding again, so two sidecars with different views of the leader cannot bounce a request forever.
const HeaderForwardedBy = "X-Forwarded-By-Sidecar"

// Snapshotter takes snapshots on demand and lists the latest ones.
type Snapshotter interface {
	// TakeFull takes a full snapshot; final marks the last one of a cluster shut down on purpose.
	TakeFull(ctx context.Context, final bool) (*snapshot.Snapshot, error)
	// TakeDelta cuts a delta snapshot of the revisions not yet stored.
	TakeDelta(ctx context.Context) (*snapshot.Snapshot, error)
	// Latest lists the newest full snapshot and the deltas after it.
	Latest(ctx context.Context) (*LatestSnapshots, error)
}

// LatestSnapshots is the body of GET /snapshot/latest.
type LatestSnapshots struct {
	FullSnapshot   *snapshot.Snapshot   `json:"fullSnapshot"`
	DeltaSnapshots []*snapshot.Snapshot `json:"deltaSnapshots"`
}

// Leader names the backup leader's sidecar.
type Leader struct {
	// Self is set when this sidecar is the backup leader.
	Self bool
	// URL is the base URL of the leader's sidecar (scheme://host:port) when it is another one.
	URL string
}

// LeaderResolver finds the backup leader at the time of a request.
type LeaderResolver interface {
	BackupLeader(ctx context.Context) (Leader, error)
}

// ErrSnapshotsNotConfigured is reported while no Snapshotter is wired in (no store configured, or the
// snapshotter is not part of this build's sidecar yet).
var ErrSnapshotsNotConfigured = errors.New("snapshots are not available: this sidecar runs without a snapshotter")

func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	if s.opts.Leader != nil {
		leader, err := s.opts.Leader.BackupLeader(r.Context())
		if err != nil {
			http.Error(w, fmt.Sprintf("finding the backup leader: %v", err), http.StatusServiceUnavailable)
			return
		}
		if !leader.Self {
			if r.Header.Get(HeaderForwardedBy) != "" {
				http.Error(w, "this sidecar is not the backup leader either; retry", http.StatusServiceUnavailable)
				return
			}
			s.forward(w, r, leader.URL)
			return
		}
	}
	if s.opts.Snapshotter == nil {
		http.Error(w, ErrSnapshotsNotConfigured.Error(), http.StatusServiceUnavailable)
		return
	}
	var (
		result any
		err    error
	)
	switch r.URL.Path {
	case "/snapshot/full":
		final, perr := parseFinal(r.URL.Query().Get("final"))
		if perr != nil {
			http.Error(w, perr.Error(), http.StatusBadRequest)
			return
		}
		result, err = s.opts.Snapshotter.TakeFull(r.Context(), final)
	case "/snapshot/delta":
		result, err = s.opts.Snapshotter.TakeDelta(r.Context())
	default:
		result, err = s.opts.Snapshotter.Latest(r.Context())
	}
	if err != nil {
		s.opts.Log.Error(err, "Snapshot request failed", "path", r.URL.Path)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, result)
}

func parseFinal(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	final, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("final=%q is not a boolean", v)
	}
	return final, nil
}

// forward replays the request on the leader's sidecar and copies its answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, leaderURL string) {
	target := leaderURL + r.URL.Path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	resp, err := s.sendToLeader(r.Context(), target)
	if err != nil {
		http.Error(w, fmt.Sprintf("forwarding to the backup leader %s: %v", leaderURL, err), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	s.opts.Log.V(1).Info("Forwarded snapshot request to the backup leader", "path", r.URL.Path, "leader", leaderURL, "status", resp.StatusCode)
	// Retry-After tells a caller the leader rate-limited when to come back.
	for _, h := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// forwardRetryDelay paces the sending of a forwarded request that did not reach the backup leader: its
// port may not be open yet (sent again for up to forwardConnectRetryFor), or the seed's DNS may not know
// its name yet (for up to forwardResolveRetryFor). CoreDNS, configured with `cache 30` as in Gardener's
// seeds and by kubeadm, answers a name it did not know with "no such host" for up to 30 s after it first
// did not know it, e.g. when a member resolved a peer before that peer's pod had an address (the lookup
// then also reports "server misbehaving" for the name asked beyond the cluster domain). A request that
// reached the leader is not sent again.
const (
	forwardRetryDelay      = time.Second
	forwardConnectRetryFor = 3 * time.Second
	forwardResolveRetryFor = 35 * time.Second
)

// sendToLeader sends the forwarded GET to target, again while it did not reach the leader.
func (s *Server) sendToLeader(ctx context.Context, target string) (*http.Response, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set(HeaderForwardedBy, "true")
		resp, err := s.opts.ForwardClient.Do(req)
		if err == nil || !notSent(err) || time.Since(start) >= retryForwardFor(err) {
			return resp, err
		}
		s.opts.Log.V(1).Info("The backup leader could not be reached; sending again", "target", target, "attempt", attempt, "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(forwardRetryDelay):
		}
	}
}

// retryForwardFor is how long a forward that failed with err is sent again.
func retryForwardFor(err error) time.Duration {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return forwardResolveRetryFor
	}
	return forwardConnectRetryFor
}

// notSent tells whether err means the request never reached the other end: its name did not resolve or
// no connection was made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
