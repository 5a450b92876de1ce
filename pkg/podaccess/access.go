// Package podaccess says who may call the HTTP endpoints of the etcd pod's containers: the sidecar's API
// and the etcd wrapper's port. Reads are open; snapshot triggers are open too (they add backups and touch
// no data), the server rate-limits callers without credentials; what changes or consumes state is served to
// callers inside the pod (loopback) only, or also to clients of the backup-restore CA. Both containers
// apply the same rules, so they live here, below both.
package podaccess

import (
	"fmt"
	"net"
	"net/http"
)

// Access says who may call an endpoint. Reads without side effects are open, and so are snapshot
// triggers, which only add backups; everything else that changes state is restricted, so that nobody in
// the pod network can make the sidecar touch the data directory or restart etcd.
type Access int

const (
	// Anyone may call: the endpoint only reads (GET /config, /healthz, /livez, /metrics).
	Anyone Access = iota
	// PodOnly admits loopback callers only: inside the pod, where the etcd wrapper is the caller
	// (/initialization/*). A client certificate does not help: no one outside the pod initializes.
	PodOnly
	// PodOrCAClient admits loopback callers and, when the server serves TLS, callers presenting a client
	// certificate of the backup-restore CA (druid, other sidecars forwarding to the backup leader):
	// /snapshot/latest, /debug/pprof/.
	PodOrCAClient
	// Trigger admits every caller the NetworkPolicy lets through, with or without a client certificate:
	// /snapshot/full (also ?final=true) and /snapshot/delta. Taking a snapshot reads etcd and adds an
	// object to the store; it deletes, overwrites and restarts nothing, and it is what Gardener's gardenlet
	// (GET …/snapshot/full?final=true over TLS verified with the etcd CA, without a client certificate) and
	// the upstream etcd-druid (EtcdOpsTask, compaction trigger, pre-hibernation snapshot; no client
	// certificate either) ask of the upstream sidecar, which authenticates nobody. The server rate-limits
	// the callers that are not Authenticated, so that such a caller cannot make it snapshot without end.
	Trigger
)

// Authenticated tells whether the caller is one the pod trusts: inside the pod (loopback), or presenting
// a client certificate of the backup-restore CA. Triggers are rate-limited for everybody else.
func Authenticated(r *http.Request) bool { return FromLoopback(r) || withVerifiedCAClient(r) }

// FromLoopback tells whether the request came from a loopback address, i.e. from inside the pod's
// network namespace.
func FromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withVerifiedCAClient tells whether the caller presented a client certificate that the server's client
// CAs verified during the handshake (tls.VerifyClientCertIfGiven fills VerifiedChains only then).
func withVerifiedCAClient(r *http.Request) bool {
	return r.TLS != nil && len(r.TLS.VerifiedChains) > 0
}

// Restrict wraps h so that only callers a admits reach it; others get 401 (no credentials that could
// admit them) or 403 (credentials that cannot), and h does not run.
func Restrict(a Access, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, reason := refusal(a, r); code != 0 {
			http.Error(w, reason, code)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func refusal(a Access, r *http.Request) (int, string) {
	if a == Anyone || a == Trigger || FromLoopback(r) {
		return 0, ""
	}
	what := r.Method + " " + r.URL.Path
	switch {
	case a == PodOnly:
		return http.StatusForbidden, fmt.Sprintf("%s is only served to callers inside the pod (loopback), not to %s", what, r.RemoteAddr)
	case withVerifiedCAClient(r):
		return 0, ""
	case r.TLS == nil:
		return http.StatusUnauthorized, fmt.Sprintf("%s needs a client certificate of the backup-restore CA, which needs TLS; without TLS only callers inside the pod (loopback) are served", what)
	default:
		return http.StatusUnauthorized, fmt.Sprintf("%s needs a client certificate of the backup-restore CA", what)
	}
}
