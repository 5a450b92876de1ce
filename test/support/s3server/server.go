package s3server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// Default credentials and region of test servers; any value works, tests just need to agree.
const (
	DefaultAccessKey = "test-access-key"
	DefaultSecretKey = "test-secret-key"
	DefaultRegion    = "us-east-1"
)

const (
	healthPath   = "/health"
	startTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running versitygw process.
type Server struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:34567, for path-style requests.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Region is the region the server signs for.
	Region string
	// Dir is the POSIX backend root: bucket b's object k is the file Dir/b/k.
	Dir string
	// CACertPEM is the certificate clients must trust when the server serves TLS; empty otherwise.
	CACertPEM []byte

	bin string // the versitygw binary, also the admin client of CreateUser and DeleteUser
	// killAfter is how long Stop waits after SIGTERM before it kills versitygw (stopTimeout; a test of
	// Stop itself sets it below versitygw's own shutdown wait, so that a wait shows as a kill).
	killAfter time.Duration
	transport *http.Transport
	cmd       *exec.Cmd
	exited    chan struct{}
	log       bytes.Buffer
	tmp       string // owned temp dir (backend + log), removed on Stop
}

// Options selects how the server is run.
type Options struct {
	// TLS serves HTTPS with a fresh self-signed certificate for 127.0.0.1 (see Server.CACertPEM),
	// for testing custom CAs and certificate verification.
	TLS bool
	// Region is the region the server signs for; empty means DefaultRegion. Providers that derive the
	// region themselves (OSS from its endpoint, ECS's fixed one) need theirs.
	Region string
	// IAM runs versitygw's internal IAM (in the server's own directory, without its cache, so that a
	// deleted user is refused at once), so that tests can create and revoke users (CreateUser,
	// DeleteUser) next to the root credentials.
	IAM bool
}

// Start runs a plain-HTTP server for t and stops it at the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWithOptions(t, Options{})
}

// StartWithOptions runs a server for t as configured and stops it at the end of the test.
func StartWithOptions(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := StartProcess(opts)
	if err != nil {
		childproc.SkipIfShortAndMissing(t, "the S3 server", err)
		t.Fatalf("starting S3 server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping S3 server: %v", err)
		}
	})
	return s
}

// StartProcess runs a server outside a test's lifetime (e.g. from TestMain); the caller must Stop it.
func StartProcess(opts Options) (*Server, error) {
	bin, err := childproc.FindBinary("versitygw", BinaryEnv)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 { // a probed free port can be taken before versitygw binds it; retry only that race
		s, err := tryStart(bin, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryStart(bin string, opts Options) (*Server, error) {
	tmp, err := os.MkdirTemp("", "s3server-")
	if err != nil {
		return nil, fmt.Errorf("creating backend dir: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	s := &Server{
		Endpoint:  "http://" + addr,
		AccessKey: DefaultAccessKey,
		SecretKey: DefaultSecretKey,
		Region:    cmp.Or(opts.Region, DefaultRegion),
		Dir:       filepath.Join(tmp, "data"),
		bin:       bin,
		exited:    make(chan struct{}),
		tmp:       tmp,
	}
	if err := os.Mkdir(s.Dir, 0o700); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("creating backend dir: %w", err)
	}
	args := []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--port", addr, "--health", healthPath, "--quiet"}
	if opts.IAM {
		iamDir := filepath.Join(tmp, "iam")
		if err := os.Mkdir(iamDir, 0o700); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("creating IAM dir: %w", err)
		}
		args = append(args, "--iam-dir", iamDir, "--iam-cache-disable")
	}
	if opts.TLS {
		certFile, keyFile, certPEM, err := selfSignedCert(tmp)
		if err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
		s.CACertPEM = certPEM
		s.Endpoint = "https://" + addr
		args = append(args, "--cert", certFile, "--key", keyFile)
	}
	s.transport = s.newTransport()
	s.cmd = exec.Command(bin, append(args, "posix", s.Dir)...)
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := s.cmd.Start(); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitHealthy(); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// waitHealthy polls the health endpoint until it answers 200 or the process exits.
func (s *Server) waitHealthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := s.httpClient(time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+healthPath, nil)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("versitygw exited during start-up (%v): %s", s.cmd.ProcessState, s.log.String())
		case <-ctx.Done():
			return fmt.Errorf("versitygw not healthy after %s: %s", startTimeout, s.log.String())
		case <-tick.C:
		}
	}
}

// Stop terminates the server (SIGTERM, SIGKILL after a grace period) and removes its directory. It
// first closes its clients' idle connections: versitygw waits for every open connection for up to its
// own shutdown timeout, also for one that never carried a request (what a request cancelled while
// dialing leaves in a client's pool).
func (s *Server) Stop() error {
	var errs []error
	s.transport.CloseIdleConnections()
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(s.stopWait()):
			_ = s.cmd.Process.Kill()
			<-s.exited
			errs = append(errs, fmt.Errorf("versitygw did not exit within %s of SIGTERM and was killed "+
				"(it waits for every open client connection: a client outside this server's may hold one)", s.stopWait()))
		}
	}
	if err := os.RemoveAll(s.tmp); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.tmp, err))
	}
	return errors.Join(errs...)
}

// stopWait is how long Stop waits for versitygw to exit on SIGTERM.
func (s *Server) stopWait() time.Duration {
	if s.killAfter > 0 {
		return s.killAfter
	}
	return stopTimeout
}

// ObjectPath is the backend file holding an object, for tests that corrupt or inspect it directly.
func (s *Server) ObjectPath(bucket, key string) string {
	return filepath.Join(s.Dir, bucket, filepath.FromSlash(key))
}

func freeAddr() (string, error) {
	port, err := freeport.Reserve()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}
