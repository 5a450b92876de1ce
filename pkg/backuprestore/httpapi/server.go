package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gardener-etcd/gardener-etcd/pkg/podaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Options are the server's collaborators. Only Initializer and Config are required.
type Options struct {
	Initializer Initializer
	// Config renders this member's etcd configuration (YAML) for GET /config.
	Config func(ctx context.Context) ([]byte, error)
	// Health reports GET /healthz; nil means healthy whenever the process serves.
	Health func(ctx context.Context) bool
	// Snapshotter takes snapshots on the backup leader; nil answers the snapshot endpoints with 503.
	Snapshotter Snapshotter
	// Leader tells which sidecar is the backup leader; nil means this one always is.
	Leader LeaderResolver
	// ForwardClient reaches the backup leader's sidecar (with its CA when sidecars serve TLS); nil means a
	// client with a 10 minute timeout, enough for a full snapshot of a large database.
	ForwardClient *http.Client
	// Gatherer serves GET /metrics; nil means prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer
	// InitializationGuard refuses to start an initialization while that is not safe (etcd runs on the
	// data directory, the etcd wrapper does not wait for one): its error is answered with 409 Conflict and
	// the status stays as it was. nil starts whenever the status is New (tests of the API alone).
	InitializationGuard func(ctx context.Context) error
	// ClientCAFile is the backup-restore CA: with TLS, clients presenting a certificate it verifies may
	// call /snapshot/latest and /debug/pprof/ from outside the pod, and trigger snapshots without a rate
	// limit (see podaccess.Access).
	ClientCAFile string
	// TriggerLimit bounds the snapshot triggers of callers without credentials; the zero value means
	// DefaultTriggerLimit.
	TriggerLimit TriggerLimit
	// EnableProfiling serves Go's pprof endpoints under /debug/pprof/ (--enable-profiling), to the same
	// callers as the snapshot endpoints: profiles name the process's internals.
	EnableProfiling bool
	Log             logr.Logger
}

// Server serves the API. It is an http.Handler so that tests and callers choose how to listen.
type Server struct {
	opts Options
	ctx  context.Context
	init initialization
	mux  *http.ServeMux
}

// New builds the server. ctx bounds the background initializations it starts; it should live as long as
// the process.
func New(ctx context.Context, opts Options) *Server {
	if opts.ForwardClient == nil {
		opts.ForwardClient = &http.Client{Timeout: 10 * time.Minute}
	}
	if opts.Gatherer == nil {
		opts.Gatherer = prometheus.DefaultGatherer
	}
	if opts.TriggerLimit == (TriggerLimit{}) {
		opts.TriggerLimit = DefaultTriggerLimit
	}
	s := &Server{opts: opts, ctx: ctx, mux: http.NewServeMux()}
	// Who may call what: see Access. Reading a final initialization status consumes it, so it is the
	// wrapper's alone like the start.
	s.mux.Handle("GET /initialization/status", podaccess.Restrict(podaccess.PodOnly, http.HandlerFunc(s.handleInitStatus)))
	s.mux.Handle("GET /initialization/start", podaccess.Restrict(podaccess.PodOnly, http.HandlerFunc(s.handleInitStart)))
	s.mux.HandleFunc("GET /config", s.handleConfig)
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	// /livez is the liveness probe's: it answers whenever the HTTP server serves, whatever etcd does (a
	// restore, a defragmentation), so that only a hung process is restarted.
	s.mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	// Upstream etcd-druid's EtcdOpsTasks POST /snapshot/full; the upstream sidecar takes either method.
	// Full, final full and delta snapshots have a rate limit each (see limiterOf).
	limiterOf := newTriggerLimiters(opts.TriggerLimit)
	for _, route := range []string{"GET /snapshot/full", "POST /snapshot/full", "GET /snapshot/delta", "POST /snapshot/delta"} {
		s.mux.Handle(route, podaccess.Restrict(podaccess.Trigger, rateLimited(limiterOf, http.HandlerFunc(s.handleSnapshot))))
	}
	s.mux.Handle("GET /snapshot/latest", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(s.handleSnapshot)))
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	if opts.EnableProfiling {
		s.mux.Handle("/debug/pprof/", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(pprof.Index)))
		s.mux.Handle("/debug/pprof/cmdline", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(pprof.Cmdline)))
		s.mux.Handle("/debug/pprof/profile", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(pprof.Profile)))
		s.mux.Handle("/debug/pprof/symbol", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(pprof.Symbol)))
		s.mux.Handle("/debug/pprof/trace", podaccess.Restrict(podaccess.PodOrCAClient, http.HandlerFunc(pprof.Trace)))
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve answers on l until ctx ends, with TLS when certFile and keyFile are set (--server-cert,
// --server-key), verifying client certificates of Options.ClientCAFile when clients offer one; the files
// are read once at start. Running requests get a few seconds to finish.
func (s *Server) Serve(ctx context.Context, l net.Listener, certFile, keyFile string) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if certFile != "" || keyFile != "" {
		cfg, err := ServerTLS(certFile, keyFile, s.opts.ClientCAFile)
		if err != nil {
			return fmt.Errorf("sidecar HTTP server: %w", err)
		}
		srv.TLSConfig = cfg
	}
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(l, "", "")
			return
		}
		errc <- srv.Serve(l)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("sidecar HTTP server: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

func (s *Server) handleInitStatus(w http.ResponseWriter, _ *http.Request) {
	status, err := s.init.read()
	if err != nil {
		w.Header().Set(podwire.HeaderInitializationError, sanitizeHeader(err.Error()))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(status))
}

func (s *Server) handleInitStart(w http.ResponseWriter, r *http.Request) {
	mode, err := podwire.ParseInitMode(r.URL.Query().Get("mode"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.opts.InitializationGuard != nil {
		if err := s.opts.InitializationGuard(r.Context()); err != nil {
			s.opts.Log.Info("Initialization refused", "mode", mode, "reason", err.Error(), "caller", r.RemoteAddr)
			http.Error(w, "initialization refused: "+err.Error(), http.StatusConflict)
			return
		}
	}
	started := s.init.start(s.ctx, s.opts.Initializer, mode, func(err error) {
		if err != nil {
			s.opts.Log.Error(err, "Initialization failed", "mode", mode)
			return
		}
		s.opts.Log.Info("Initialization succeeded", "mode", mode)
	})
	if started {
		s.opts.Log.Info("Initialization started", "mode", mode)
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	out, err := s.opts.Config(r.Context())
	if err != nil {
		s.opts.Log.Error(err, "Rendering the etcd configuration")
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(out)
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	healthy := s.opts.Health == nil || s.opts.Health(r.Context())
	code := http.StatusOK
	if !healthy {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]bool{"health": healthy})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// sanitizeHeader keeps an error message usable as a header value (no line breaks, bounded length).
func sanitizeHeader(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
		if len(out) >= 1024 {
			break
		}
	}
	return string(out)
}
