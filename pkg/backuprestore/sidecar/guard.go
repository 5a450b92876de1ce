package sidecar

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// wrapperPhaseTimeout bounds asking the etcd wrapper for its phase (it answers from memory).
const wrapperPhaseTimeout = 5 * time.Second

// initializationGuard is httpapi.Options.InitializationGuard: an initialization may only start while no
// etcd runs on the data directory (its locks are free) and the etcd wrapper of this pod says it waits for
// one. The wrapper starts etcd only after an initialization it requested succeeded, so together they
// keep the initializer away from a directory etcd uses or is about to use. A wrapper that cannot be asked
// refuses too. The upstream etcd-wrapper images have no /phase (404): with them the data-dir locks alone
// decide, so that a landscape can run our sidecar beside its wrapper while the two are switched one at a
// time.
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

// phaseUnknown is the phase of a wrapper that has no /phase endpoint (the upstream etcd-wrapper).
const phaseUnknown podwire.WrapperPhase = ""

// wrapperPhase asks the etcd wrapper for its phase (GET /phase); a wrapper without the endpoint has
// phaseUnknown.
func wrapperPhase(ctx context.Context, client *http.Client, wrapperURL string) (podwire.WrapperPhase, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(wrapperURL, "/")+"/phase", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
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
