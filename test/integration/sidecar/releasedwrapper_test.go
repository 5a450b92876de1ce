package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// releasedWrapper is the etcd container of Gardener's released etcd-wrapper (github.com/gardener/etcd-wrapper
// v0.7.0; the Go module proxy does not serve it, so its wire sequence is replayed here step by step):
//   - internal/bootstrap/bootstrap.go initializer.Run: every second GET /initialization/status (a non-2xx
//     answer counts as Unknown, "New" and "Successful" as themselves, anything else as in progress); on New
//     GET /initialization/start?mode=<full|sanity> (full unless <data volume>/exit_code says "terminated"
//     or "interrupt"); until Successful;
//   - tryGetEtcdConfig: GET /config, up to 5 tries a second apart, written to a file and loaded with
//     embed.ConfigFromFile;
//   - internal/app/app.go Start: only then the HTTP server of the wrapper port (/readyz, POST /stop) and
//     embedded etcd start. Before that nothing listens on the wrapper port, and there is no /phase.
type releasedWrapper struct {
	sidecarURL  string
	wrapperPort int
	dataVolume  string
	client      *http.Client
	log         logr.Logger
}

const releasedWrapperBackoff = time.Second // defaultBackOffBetweenRetries

// run is the container's process: it returns when ctx ends, POST /stop arrives or etcd fails.
func (w releasedWrapper) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := w.initialize(ctx); err != nil {
		return err
	}
	cfg, err := w.config(ctx)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(w.wrapperPort))
	if err != nil {
		return err
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		_ = l.Close()
		return err
	}
	defer e.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		select {
		case <-e.Server.ReadyNotify():
			rw.WriteHeader(http.StatusOK)
		default:
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/stop", func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			cancel()
			rw.WriteHeader(http.StatusOK)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return err
	}
}

func (w releasedWrapper) initialize(ctx context.Context) error {
	for status := ""; status != "Successful"; {
		var err error
		if status, err = w.initStatus(ctx); err != nil {
			w.log.Info("error while fetching initialization status", "error", err.Error())
		}
		if status == "New" {
			if err := w.get(ctx, "/initialization/start?mode="+w.validationMode(), nil); err != nil {
				w.log.Info("error while triggering initialization to backup-restore", "error", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(releasedWrapperBackoff):
		}
	}
	return nil
}

func (w releasedWrapper) initStatus(ctx context.Context) (string, error) {
	var body []byte
	if err := w.get(ctx, "/initialization/status", &body); err != nil {
		return "Unknown", err
	}
	switch s := string(body); s {
	case "New", "Successful":
		return s, nil
	default:
		return "InProgress", nil
	}
}

func (w releasedWrapper) validationMode() string {
	data, err := os.ReadFile(filepath.Join(w.dataVolume, "exit_code"))
	if err == nil && (string(data) == "terminated" || string(data) == "interrupt") {
		return "sanity"
	}
	return "full"
}

func (w releasedWrapper) config(ctx context.Context) (*embed.Config, error) {
	var body []byte
	var err error
	for range 5 {
		if err = w.get(ctx, "/config", &body); err == nil {
			path := filepath.Join(w.dataVolume, "etcd.conf.yaml")
			if err := os.WriteFile(path, body, 0o600); err != nil {
				return nil, err
			}
			return embed.ConfigFromFile(path)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(releasedWrapperBackoff):
		}
	}
	return nil, err
}

// get calls the sidecar; any 2xx is success (internal/util/http.go ResponseHasOKCode).
func (w releasedWrapper) get(ctx context.Context, path string, body *[]byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.sidecarURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, data)
	}
	if body != nil {
		*body = data
	}
	return nil
}

// Our sidecar beside Gardener's released etcd-wrapper, which serves nothing on the wrapper port until the
// initialization it asked for is done: the sidecar initializes (the data directory's locks are free, and
// a wrapper that does not answer yet is the released one), etcd starts from its configuration and the
// sidecar backs it up.
func TestSidecarBesideTheReleasedWrapper(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(t, 1)
	p := c.pods[0]
	volume := filepath.Dir(p.dataDir)
	p.startWith(func() func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		w := releasedWrapper{sidecarURL: p.sidecarURL(), wrapperPort: p.sidecar.EtcdWrapperPort, dataVolume: volume,
			client: &http.Client{Timeout: time.Minute}, log: testr.New(t).WithName("released-wrapper")}
		go func() { done <- w.run(ctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("released wrapper: %v", err)
			}
		}
	})
	g.Eventually(p.ready, time.Minute, 200*time.Millisecond).Should(BeTrue(), "the initialization completes and etcd starts")
	cli := etcdserver.NewClient(t, p.client.String())
	rev := put(t, cli, "beside-the-released-wrapper/", 5)
	// The writes are in a delta, or in the first full snapshot when the backup leader took it only after
	// them (a loaded machine): either backs them up.
	g.Eventually(func() int64 {
		var backedUp int64
		for _, s := range c.snapshots() {
			backedUp = max(backedUp, s.LastRevision)
		}
		return backedUp
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(rev), "the sidecar backs the member up")
}
