package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// wrapperPhaseTimeout bounds asking the etcd wrapper for its phase (it answers from memory).
const wrapperPhaseTimeout = 5 * time.Second

// initializationGuard is httpapi.Options.InitializationGuard: an initialization may only start while no
// etcd runs on the data directory (its locks are free) and the etcd wrapper of this pod says it waits for
// one. The wrapper starts etcd only after an initialization it requested succeeded, so together they
// keep the initializer away from a directory etcd uses or is about to use. A wrapper that answers
// otherwise (an error status, a timeout) refuses too.
//
// Gardener's released etcd-wrapper has no /phase and serves its port only once the initialization it
// asked for is done (github.com/gardener/etcd-wrapper internal/app/app.go: the HTTP server starts with
// etcd, after internal/bootstrap/bootstrap.go polled /initialization/status and called
// /initialization/start). Beside it, /phase answers 404 once etcd runs, and before that nobody listens
// (connection refused). Both mean the released wrapper's protocol, where the data-dir locks alone decide:
// the call to /initialization/start — loopback only, so from this pod's etcd container — is the released
// wrapper saying it waits. Our wrapper listens before it asks for an initialization, so a refused
// connection never hides it, as long as --etcd-wrapper-port names its port; a landscape can switch the two
// images one at a time.
func initializationGuard(dataDir, wrapperURL string) func(ctx context.Context) error {
	client := &http.Client{Timeout: wrapperPhaseTimeout}
	return func(ctx context.Context) error {
		if err := initializer.CheckNotInUse(dataDir); err != nil {
			return err
		}
		phase, err := wrapperPhase(ctx, client, wrapperURL)
		if err != nil {
			return err
		}
		if phase != podwire.PhaseWaitingForInitialization && phase != phaseUnknown {
			return fmt.Errorf("the etcd wrapper at %s does not wait for an initialization (phase %q)", wrapperURL, phase)
		}
		return nil
	}
}

// phaseUnknown is the phase of a wrapper that has no /phase endpoint or does not listen yet (Gardener's
// released etcd-wrapper).
const phaseUnknown podwire.WrapperPhase = ""

// wrapperPhase asks the etcd wrapper for its phase (GET /phase); a wrapper without the endpoint (404) or
// with nothing listening on its port yet (connection refused) has phaseUnknown.
func wrapperPhase(ctx context.Context, client *http.Client, wrapperURL string) (podwire.WrapperPhase, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(wrapperURL, "/")+"/phase", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return phaseUnknown, nil
	}
	if err != nil {
		return "", fmt.Errorf("asking the etcd wrapper whether it waits for an initialization: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return "", fmt.Errorf("reading the etcd wrapper's phase: %w", err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return phaseUnknown, nil
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the etcd wrapper at %s answers GET /phase with %s", wrapperURL, resp.Status)
	}
	return podwire.WrapperPhase(strings.TrimSpace(string(body))), nil
}
