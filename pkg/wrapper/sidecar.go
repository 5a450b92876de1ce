package wrapper

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// sidecar is the wrapper's client of the backup-restore sidecar's HTTP API.
type sidecar struct {
	base   string
	client *http.Client
}

func newSidecar(o Options) (*sidecar, error) {
	scheme := "http"
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.BackupRestoreTLSEnabled {
		scheme = "https"
		pem, err := os.ReadFile(o.BackupRestoreCACertBundlePath)
		if err != nil {
			return nil, fmt.Errorf("reading the sidecar's CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in the sidecar's CA bundle %s", o.BackupRestoreCACertBundlePath)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &sidecar{base: scheme + "://" + o.BackupRestoreHostPort, client: &http.Client{Timeout: 30 * time.Second, Transport: transport}}, nil
}

func (s *sidecar) get(ctx context.Context, path string) (*http.Response, []byte, error) {
	return s.do(ctx, s.client, path)
}

// unbounded is the client without its per-request timeout, for a request bounded by its context.
func (s *sidecar) unbounded() *http.Client {
	c := *s.client
	c.Timeout = 0
	return &c
}

func (s *sidecar) do(ctx context.Context, client *http.Client, path string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp, body, fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return resp, body, nil
}

// initialize runs the sidecar's initialization in mode and waits for its outcome. Unreachable sidecars
// (still starting) are waited for; a Failed initialization ends the wait with the sidecar's reason. Right
// after the request the status is asked again at once (once per interval, so that a sidecar that keeps
// answering New is not asked in a loop): a sanity check is done within milliseconds, and etcd would
// otherwise start a whole interval later.
func (s *sidecar) initialize(ctx context.Context, mode podwire.InitMode, interval time.Duration, log logr.Logger) error {
	requested, rechecked := false, false
	for {
		recheck := false
		resp, body, err := s.get(ctx, "/initialization/status")
		if err != nil {
			log.V(1).Info("Sidecar not answering yet", "error", err.Error())
		} else {
			switch status := podwire.InitStatus(body); status {
			case podwire.InitNew:
				// Also after our request: the outcome was read by someone else; ask again.
				if _, _, err := s.get(ctx, "/initialization/start?mode="+string(mode)); err != nil {
					log.Info("Requesting initialization failed; retrying", "error", err.Error())
				} else {
					requested, recheck = true, !rechecked
					log.Info("Requested initialization", "mode", mode)
				}
			case podwire.InitSuccessful:
				if requested {
					return nil
				}
			case podwire.InitFailed:
				if requested {
					reason := resp.Header.Get(podwire.HeaderInitializationError)
					if reason == "" {
						reason = "no reason given"
					}
					return fmt.Errorf("the sidecar failed to initialize the data directory: %s", reason)
				}
			case podwire.InitProgress:
			default:
				log.Info("Unknown initialization status", "status", status)
			}
		}
		if rechecked = recheck; recheck {
			continue
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("waiting for the sidecar's initialization"), ctx.Err())
		case <-time.After(interval):
		}
	}
}

// configTimeout bounds GET /config. The upstream sidecar answers it only after asking the cluster for its
// members and for a learner (gardener/etcd-backup-restore pkg/server/httpAPI.go serveConfig: up to 5 s
// twice, then up to 30 s), which in a fresh multi-member bootstrap, with no member serving yet, takes
// longer than the client's bound of other requests; cutting it off restarted the container into the same
// wait. Ours answers at once.
const configTimeout = 2 * time.Minute

// config fetches etcd's configuration for this member, waiting up to configTimeout.
func (s *sidecar) config(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, configTimeout)
	defer cancel()
	_, body, err := s.do(ctx, s.unbounded(), "/config")
	if err != nil {
		return nil, fmt.Errorf("fetching etcd's configuration from the sidecar: %w", err)
	}
	return body, nil
}
