package httpapi

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
)

// Access says who may call an endpoint. Reads without side effects are open; everything that changes
// state is restricted, so that nobody in the pod network can make the sidecar touch the data directory,
// restart etcd or take snapshots.
type Access int

const (
	// Anyone may call: the endpoint only reads (GET /config, /healthz, /livez, /metrics).
	Anyone Access = iota
	// PodOnly admits loopback callers only: inside the pod, where the etcd wrapper is the caller
	// (/initialization/*). A client certificate does not help: no one outside the pod initializes.
	PodOnly
	// PodOrCAClient admits loopback callers and, when the server serves TLS, callers presenting a client
	// certificate of the backup-restore CA (the Gardener side, other sidecars forwarding to the backup
	// leader): /snapshot/*.
	PodOrCAClient
)

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
	if a == Anyone || FromLoopback(r) {
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

// ServerTLS is the server side of the API's TLS: the certificate it presents and the CA whose client
// certificates it verifies when a client offers one (tls.VerifyClientCertIfGiven; endpoints that need one
// check it per request, see Access). An empty clientCAFile verifies no client certificate.
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("server certificate %s: %w", certFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA: no certificate in %s", clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}
