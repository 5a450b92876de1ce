package member

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// WrapperRestarter restarts etcd through the etcd wrapper: POST <URL>/stop stops etcd gracefully and
// ends the wrapper with exit code 0, so the kubelet starts the etcd container again, which fetches the
// configuration from this sidecar anew.
type WrapperRestarter struct {
	// URL is the wrapper's base URL, e.g. http://etcd-main-local:9095 (spec.etcd.wrapperPort).
	URL string
	// Client defaults to one with a 30 s timeout: a graceful stop may wait for etcd to hand over leadership.
	Client *http.Client
}

// RestartEtcd implements EtcdRestarter.
func (w WrapperRestarter) RestartEtcd(ctx context.Context) error {
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(w.URL, "/")+"/stop", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("asking the etcd wrapper at %s to stop etcd: %w", w.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("etcd wrapper at %s refused to stop etcd: %s: %s", w.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
