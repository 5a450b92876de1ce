// Package gcsserver runs a real Google Cloud Storage JSON API server for tests: fake-gcs-server, built from
// its Go module into bin/ by `make tools`, over plain HTTP on 127.0.0.1 with its in-memory backend. Storage
// code is so exercised against the GCS protocol (resumable uploads included) rather than a mock. Every
// server gets a free port and is stopped when the test ends.
package gcsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// BinaryEnv overrides where the fake-gcs-server binary is looked up, for runs outside the repository.
const BinaryEnv = "FAKE_GCS_SERVER_BIN"

// Server is a running fake-gcs-server.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:34567.
	URL string
	// Endpoint is the JSON API endpoint clients are given (option.WithEndpoint, the store's endpoint
	// override): URL + "/storage/v1/".
	Endpoint string

	proc *childproc.Process
	tmp  string
}

// Start runs a server for t and stops it at the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	return childproc.ForTest(t, "the GCS server", StartProcess)
}

// StartProcess runs a server outside a test's lifetime; the caller must Stop it.
func StartProcess() (*Server, error) {
	bin, err := childproc.FindBinary("fake-gcs-server", BinaryEnv)
	if err != nil {
		return nil, err
	}
	return childproc.StartRetrying(func() (*Server, error) { return tryStart(bin) })
}

func tryStart(bin string) (*Server, error) {
	port, err := freeport.Reserve()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "gcsserver-")
	if err != nil {
		return nil, err
	}
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := &Server{URL: "http://" + hostPort, tmp: tmp}
	s.Endpoint = s.URL + "/storage/v1/"
	s.proc, err = childproc.Start(childproc.Spec{
		Binary: bin,
		Args: []string{
			"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port),
			// Resumable upload sessions and download links point at these.
			"-public-host", hostPort, "-external-url", s.URL,
			"-backend", "memory", "-log-level", "warn",
		},
		DropEnvPrefixes: []string{"FAKE_GCS_"},
		Dir:             tmp,
		Ready:           childproc.HTTPReady(s.URL+"/_internal/healthcheck", 200),
	})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return s, nil
}

// Stop terminates the server and removes its working directory.
func (s *Server) Stop() error {
	return errors.Join(s.proc.Stop(), os.RemoveAll(s.tmp))
}

// Client is a storage client for the server (no authentication), for test set-up and checks behind a
// store's back. The caller closes it.
func (s *Server) Client(ctx context.Context) (*storage.Client, error) {
	return storage.NewClient(ctx, option.WithEndpoint(s.Endpoint), option.WithoutAuthentication())
}

// TestClient is Client for a test, closed when it ends.
func (s *Server) TestClient(t testing.TB) *storage.Client {
	t.Helper()
	c, err := s.Client(context.Background())
	if err != nil {
		t.Fatalf("GCS client for %s: %v", s.Endpoint, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// CreateBucket creates a bucket or fails the test.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.CreateBucketE(t.Context(), name); err != nil {
		t.Fatal(err)
	}
}

// CreateBucketE creates a bucket, for callers without a testing.TB.
func (s *Server) CreateBucketE(ctx context.Context, name string) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Bucket(name).Create(ctx, "test-project", nil); err != nil {
		return fmt.Errorf("creating bucket %q on %s: %w", name, s.URL, err)
	}
	return nil
}
