package swiftserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// Binaries are the programs a server needs; the packages hack/stores/install-swift.sh installs.
var Binaries = []string{"swift-proxy-server", "swift-account-server", "swift-container-server", "swift-object-server", "swift-ring-builder", "memcached"}

const (
	// startTimeout is generous: each of Swift's servers imports for seconds on a loaded machine.
	startTimeout = 3 * time.Minute
	stopTimeout  = 10 * time.Second
)

// Server is a running all-in-one Swift.
type Server struct {
	// AuthURL is TempAuth's v1 endpoint, http://127.0.0.1:<port>/auth/v1.0.
	AuthURL string
	// User ("account:user") and Key log in at AuthURL.
	User, Key string
	// StorageURL is the account's URL, http://127.0.0.1:<port>/v1/AUTH_test.
	StorageURL string

	devices string
	tmp     string
	procs   []*process
	http    *http.Client
}

type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

// errUnavailable marks the reasons to skip rather than fail: this machine cannot run Swift.
var errUnavailable = errors.New("swift cannot run here")

// Start runs a server for t and stops it at the end of the test; it skips t when Swift cannot run here.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the Swift server under -short")
	}
	s, err := StartProcess()
	if errors.Is(err, errUnavailable) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("starting Swift: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping Swift: %v", err)
		}
	})
	return s
}

// Available reports why Swift cannot run here, or nil.
func Available() error {
	for _, b := range Binaries {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%w: OpenStack Swift is not installed (%s not in PATH); install it with hack/stores/install-swift.sh (make test-stores does)", errUnavailable, b)
		}
	}
	return nil
}

// StartProcess runs a server outside a test's lifetime; the caller must Stop it.
func StartProcess() (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "swiftserver-")
	if err != nil {
		return nil, err
	}
	s := &Server{User: DefaultUser, Key: DefaultKey, tmp: tmp, devices: filepath.Join(tmp, "devices"), http: &http.Client{Timeout: 30 * time.Second}}
	if err := s.start(); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

func (s *Server) start() error {
	if err := checkUserXattrs(s.tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.devices, "d1"), 0o700); err != nil {
		return err
	}
	ports := make([]int, 5)
	for i := range ports {
		p, err := freeport.Reserve()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	proxyPort, memcachePort := ports[0], ports[1]
	backends := []backend{{"account", ports[2]}, {"container", ports[3]}, {"object", ports[4]}}
	me, err := user.Current()
	if err != nil {
		return err
	}
	if err := writeConfig(s.tmp, s.devices, me.Username, proxyPort, memcachePort, backends); err != nil {
		return fmt.Errorf("writing the configuration: %w", err)
	}
	if err := s.buildRings(backends); err != nil {
		return err
	}
	memcached := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(memcachePort), "-U", "0", "-m", "16"}
	if os.Geteuid() == 0 {
		memcached = append(memcached, "-u", me.Username) // memcached refuses to run as root unless told
	}
	if err := s.run("memcached", memcached...); err != nil {
		return err
	}
	for _, b := range backends {
		if err := s.run("swift-"+b.name+"-server", filepath.Join(s.tmp, b.name+"-server.conf"), "-v"); err != nil {
			return err
		}
	}
	if err := s.run("swift-proxy-server", filepath.Join(s.tmp, "proxy-server.conf"), "-v"); err != nil {
		return err
	}
	s.AuthURL = fmt.Sprintf("http://127.0.0.1:%d/auth/v1.0", proxyPort)
	s.StorageURL = fmt.Sprintf("http://127.0.0.1:%d/v1/%s", proxyPort, Account)
	return s.waitReady()
}

// checkUserXattrs probes dir for user extended attributes, where the object server keeps metadata.
func checkUserXattrs(dir string) error {
	probe := filepath.Join(dir, "xattr-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return err
	}
	defer os.Remove(probe)
	if err := syscall.Setxattr(probe, "user.swift.probe", []byte("1"), 0); err != nil {
		return fmt.Errorf("%w: the file system of %s has no user extended attributes (%v), which Swift's object server needs; point TMPDIR at one that has (ext4, xfs)", errUnavailable, dir, err)
	}
	return nil
}

// buildRings runs ringScript with the Python interpreter of Swift's own tools.
func (s *Server) buildRings(backends []backend) error {
	python, err := interpreterOf("swift-ring-builder")
	if err != nil {
		return err
	}
	args := append(python[1:], "-c", ringScript, s.tmp) //nolint:gocritic // args is a new slice; python is not used after
	for _, b := range backends {
		args = append(args, fmt.Sprintf("%s=%d", b.name, b.port))
	}
	if out, err := exec.Command(python[0], args...).CombinedOutput(); err != nil {
		return fmt.Errorf("building the rings with %s: %v: %s", python[0], err, out)
	}
	return nil
}

// interpreterOf reads the #! line of a script in PATH.
func interpreterOf(script string) ([]string, error) {
	p, err := exec.LookPath(script)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		return nil, fmt.Errorf("%s has no #! line to find Swift's Python", p)
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s has an empty #! line", p)
	}
	return fields, nil
}

func (s *Server) run(name string, args ...string) error {
	logPath := filepath.Join(s.tmp, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	s.procs = append(s.procs, p)
	return nil
}

// waitReady waits until a container and an object can be written and removed, which needs every
// server and memcached (TempAuth's tokens) to answer.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var last error
	for {
		if last = s.probe(ctx); last == nil {
			return nil
		}
		for _, p := range s.procs {
			select {
			case <-p.exited:
				return fmt.Errorf("%s exited during start-up (%v): %s", p.name, p.cmd.ProcessState, s.logTails())
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Swift servers are not ready after %s (last: %v): %s", startTimeout, last, s.logTails())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) probe(ctx context.Context) error {
	token, err := s.Token(ctx)
	if err != nil {
		return err
	}
	for _, step := range []struct{ method, path string }{
		{http.MethodPut, "/swiftserver-probe"}, {http.MethodPut, "/swiftserver-probe/o"},
		{http.MethodDelete, "/swiftserver-probe/o"}, {http.MethodDelete, "/swiftserver-probe"},
	} {
		if err := s.do(ctx, token, step.method, step.path); err != nil {
			return err
		}
	}
	return nil
}

// Stop terminates every process (SIGTERM, SIGKILL after a grace period) and removes the directory.
func (s *Server) Stop() error {
	var errs []error
	for _, p := range s.procs {
		select {
		case <-p.exited:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.exited
			errs = append(errs, fmt.Errorf("%s ignored SIGTERM for %s and was killed", p.name, stopTimeout))
		}
	}
	if err := os.RemoveAll(s.tmp); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.tmp, err))
	}
	return errors.Join(errs...)
}

// logTails is the end of every process's log, for start-up errors.
func (s *Server) logTails() string {
	var b strings.Builder
	for _, p := range s.procs {
		data, _ := os.ReadFile(p.logPath)
		if len(data) > 2000 {
			data = data[len(data)-2000:]
		}
		fmt.Fprintf(&b, "\n--- %s:\n%s", p.name, data)
	}
	return b.String()
}
