// Package childproc runs a test server binary (an emulator built or installed into bin/ by `make tools`) as
// a child process: it finds the binary, starts it, polls until it serves, keeps its output for error
// messages and stops it. The server packages (test/azurite, test/gcsserver) add what is particular to
// their server: flags, readiness check, clients.
package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
)

// BinDirEnv names the directory the tool binaries are in: the Makefile sets it to bin/ (it is also where
// the envtest harness looks). When it is set, FindBinary looks only there, so a run with it pointing at an
// empty directory sees no tools at all, as on a clone where `make tools` never ran (`make test-unit-nobin`).
const BinDirEnv = "KUBEBUILDER_ASSETS"

// ErrNoBinary is wrapped by FindBinary's error when the binary is not installed; ForTest skips the test
// then under -short, so that `make test-unit` passes without `make tools`.
var ErrNoBinary = errors.New("not installed")

// FindBinary returns $<env> when set, else <name> in $KUBEBUILDER_ASSETS when that is set, else bin/<name>
// of the nearest enclosing directory that has one (tests run in their package directory, somewhere below
// the repository root).
func FindBinary(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		candidate := filepath.Join(dir, name)
		if _, err := os.Stat(candidate); err != nil {
			return "", fmt.Errorf("%s %w in %s=%s: install it with `make tools` or set %s", name, ErrNoBinary, BinDirEnv, dir, env)
		}
		return candidate, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w", name, err)
	}
	for {
		candidate := filepath.Join(dir, "bin", name)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("bin/%s %w above the working directory: install it with `make tools` or set %s", name, ErrNoBinary, env)
		}
		dir = parent
	}
}

// SkipIfShortAndMissing skips t when it runs under -short and err says a binary is not installed: unit
// runs need no tools, while a full run without them fails, so that missing tools never pass unnoticed.
func SkipIfShortAndMissing(t testing.TB, what string, err error) {
	t.Helper()
	if testing.Short() && errors.Is(err, ErrNoBinary) {
		t.Skipf("%s needs a tool binary, and -short runs without `make tools`: %v", what, err)
	}
}

// Spec is how to run a server.
type Spec struct {
	// Binary is the executable, Args its arguments.
	Binary string
	Args   []string
	// Env is added to this process's environment, from which every variable starting with one of
	// DropEnvPrefixes is removed first (a developer's settings for the same server must not leak in).
	Env             []string
	DropEnvPrefixes []string
	// Dir is the working directory.
	Dir string
	// Ready reports nil once the server serves; it is polled until then.
	Ready func(ctx context.Context) error
}

// Process is a running server.
type Process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    SyncBuffer
}

// Start runs spec and returns once Ready reports nil; a server that exits or is not ready within a minute
// is stopped and its output returned in the error.
func Start(spec Spec) (*Process, error) {
	p := &Process{name: filepath.Base(spec.Binary), exited: make(chan struct{})}
	p.cmd = exec.Command(spec.Binary, spec.Args...)
	p.cmd.Dir = spec.Dir
	p.cmd.Env = append(environWithout(spec.DropEnvPrefixes), spec.Env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Binary, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	if err := p.waitReady(spec.Ready); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

func (p *Process) waitReady(ready func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		last = ready(attempt)
		cancelAttempt()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up (%v): %s", p.name, p.cmd.ProcessState, p.Log())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last check: %v): %s", p.name, startTimeout, last, p.Log())
		case <-tick.C:
		}
	}
}

// Stop terminates the server: SIGTERM, then SIGKILL after a grace period (which is reported).
func (p *Process) Stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s ignored SIGTERM for %s and was killed", p.name, stopTimeout)
	}
}

// Kill ends the server with SIGKILL, as a node failure or the OOM killer does: no clean shutdown. It
// returns once the process has exited.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Log is what the server printed so far.
func (p *Process) Log() string { return p.log.String() }

// HTTPReady is a Ready check: url answers with any status in want (any status at all when want is empty).
func HTTPReady(url string, want ...int) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if len(want) == 0 {
			return nil
		}
		for _, code := range want {
			if resp.StatusCode == code {
				return nil
			}
		}
		return fmt.Errorf("GET %s: status %s", url, resp.Status)
	}
}

func environWithout(prefixes []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		drop := false
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

// SyncBuffer collects output written by one goroutine (a child process, a running command) that a test
// reads from another.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startAttempts is how often StartRetrying tries: a port reserved with test/freeport can still be taken by
// a process that does not reserve ports, and the next attempt gets another one.
const startAttempts = 3

// StartRetrying runs start until it succeeds, at most startAttempts times, and returns the last error.
func StartRetrying[S any](start func() (S, error)) (S, error) {
	var s S
	var err error
	for range startAttempts {
		if s, err = start(); err == nil {
			return s, nil
		}
	}
	return s, err
}

// ForTest starts a server with start for t and stops it when the test ends; what names the server in
// failures.
func ForTest[S interface{ Stop() error }](t testing.TB, what string, start func() (S, error)) S {
	t.Helper()
	s, err := start()
	if err != nil {
		SkipIfShortAndMissing(t, what, err)
		t.Fatalf("starting %s: %v", what, err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping %s: %v", what, err)
		}
	})
	return s
}
