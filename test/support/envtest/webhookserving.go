package envtest

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// WaitWebhookServing waits up to 30 s until a webhook server on address accepts TLS connections: a
// manager starts serving asynchronously, and an apiserver call before that fails the admission.
func WaitWebhookServing(address string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness probe only
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook server on %s did not start: %w", address, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
