package wrapper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/pkg/podaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// wrapper holds the state /readyz, /phase and /stop look at.
type wrapper struct {
	mu     sync.Mutex
	phase  podwire.WrapperPhase
	etcd   *embed.Etcd
	client *clientv3.Client
	// older is an older etcd the data directory runs under before this etcd starts (step.go).
	older *olderEtcd
	stop  chan struct{}
	once  sync.Once
}

// setOlder records the older etcd that runs as this member (nil when it stopped): it answers /readyz and
// /stop meanwhile, in phase Running.
func (w *wrapper) setOlder(e *olderEtcd) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.older = e
	if e != nil {
		w.phase = podwire.PhaseRunning
	} else {
		w.phase = podwire.PhaseStartingEtcd
	}
}

func (w *wrapper) setPhase(p podwire.WrapperPhase) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phase = p
}

// Run initializes through the sidecar, runs etcd and returns when it stopped: nil after a graceful stop
// (ctx cancelled, i.e. SIGTERM, or POST /stop), an error otherwise. The process should exit with 0 only
// for nil.
func Run(ctx context.Context, o Options, log logr.Logger) error {
	if err := o.Validate(); err != nil {
		return err
	}
	w := &wrapper{stop: make(chan struct{}), phase: podwire.PhaseWaitingForInitialization}
	defer w.setPhase(podwire.PhaseStopped)
	cert, err := selfSignedCertificate()
	if err != nil {
		return fmt.Errorf("certificate of the wrapper port: %w", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(o.ListenHost, strconv.Itoa(o.WrapperPort)))
	if err != nil {
		return fmt.Errorf("wrapper port: %w", err)
	}
	srv := &http.Server{Handler: w.handler(log), ReadHeaderTimeout: 10 * time.Second}
	servePlainAndTLS(srv, l, cert)
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		_ = l.Close()
	}()

	graceful, err := consumeCleanExit(o.MarkerDir)
	if err != nil {
		return err
	}
	mode := podwire.InitFull
	if graceful {
		mode = podwire.InitSanity
	}
	sc, err := newSidecar(o)
	if err != nil {
		return err
	}
	if err := sc.initialize(ctx, mode, o.PollInterval, log); err != nil {
		if ctx.Err() != nil {
			log.Info("Terminated before etcd started")
			return nil
		}
		return err
	}
	w.setPhase(podwire.PhaseStartingEtcd)
	config, err := sc.config(ctx)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(config)
	if err != nil {
		return err
	}
	if waitForJoinPeers(ctx, cfg, o.PollInterval, log); ctx.Err() != nil {
		log.Info("Terminated before etcd started")
		return nil
	}
	if o.HoldVersion != "" {
		held, whyNot, err := holdPlan(ctx, cfg, o)
		if err != nil {
			return err
		}
		if whyNot == "" {
			return w.runHeld(ctx, held, config, cfg, o, log)
		}
		log.Info("Not holding this member at the older etcd version: it runs the newest etcd the data needs", "version", o.HoldVersion, "reason", whyNot)
	}
	if stopped, err := w.stepThrough(ctx, config, cfg, o, log); err != nil {
		return err
	} else if stopped {
		return markCleanExit(o.MarkerDir)
	}
	e, err := startEtcd(cfg, o.EtcdLogger)
	if err != nil {
		return err
	}
	log.Info("Started etcd", "member", cfg.Name, "dataDir", cfg.Dir, "clusterState", cfg.ClusterState)
	cli, err := localClient(cfg, o)
	if err != nil {
		e.Close()
		return err
	}
	defer cli.Close()
	w.mu.Lock()
	w.etcd, w.client, w.phase = e, cli, podwire.PhaseRunning
	w.mu.Unlock()

	select {
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcd failed: %w", err)
	case <-e.Server.StopNotify():
		e.Close()
		return fmt.Errorf("etcd stopped by itself (e.g. removed from the cluster)")
	case <-ctx.Done():
		log.Info("Stopping etcd on termination signal")
	case <-w.stop:
		log.Info("Stopping etcd on request")
	}
	e.Close()
	log.Info("etcd stopped gracefully")
	return markCleanExit(o.MarkerDir)
}

func (w *wrapper) handler(log logr.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, r *http.Request) {
		if err := w.ready(r.Context()); err != nil {
			http.Error(rw, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = rw.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /phase", func(rw http.ResponseWriter, _ *http.Request) {
		w.mu.Lock()
		phase := w.phase
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte(phase))
	})
	// Stopping etcd is for the sidecar of this pod only (the peer URL switch): loopback callers.
	mux.Handle("POST /stop", podaccess.Restrict(podaccess.PodOnly, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		w.mu.Lock()
		running := w.etcd != nil || w.older != nil
		w.mu.Unlock()
		if !running {
			http.Error(rw, "etcd is not running yet", http.StatusConflict)
			return
		}
		log.Info("Received a stop request")
		w.once.Do(func() { close(w.stop) })
		_, _ = rw.Write([]byte("stopping"))
	})))
	return mux
}

// ready: etcd has joined its cluster (published itself, ReadyNotify) and answers reads; an older etcd
// that the data directory runs under first, when it knows a leader.
func (w *wrapper) ready(ctx context.Context) error {
	w.mu.Lock()
	e, cli, older := w.etcd, w.client, w.older
	w.mu.Unlock()
	if older != nil {
		return older.ready(ctx)
	}
	if e == nil {
		return errors.New("etcd is not running yet")
	}
	select {
	case <-e.Server.ReadyNotify():
	default:
		return errors.New("etcd has not joined its cluster yet")
	}
	if err := serves(ctx, cli); err != nil {
		return fmt.Errorf("etcd does not serve: %w", err)
	}
	return nil
}
