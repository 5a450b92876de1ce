package initializer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Timeouts of a step through an older etcd.
const (
	stepReadyTimeout = 2 * time.Minute
	stepStopTimeout  = time.Minute
)

// stepQuotaBackendBytes is the old etcd's --quota-backend-bytes while it steps: 8 GiB, etcd's suggested
// maximum.
const stepQuotaBackendBytes = 8 << 30

// step is one etcd minor version a data directory is run through.
type step struct {
	// version is "3.5" or "3.6"; binary is that etcd's server binary.
	version, binary string
}

// stepThrough brings a one-member data directory one etcd minor version forward, without losing a write,
// the way etcd's upgrade rule says (one minor version at a time): it runs the binary of s on the
// directory as this member until it has applied every entry (for 3.6: until it has recorded storage
// version 3.6) and taken a raft snapshot after them, then stops it cleanly (SIGTERM). Through 3.6 this
// brings etcd 3.5 data to a state the etcd of this build (3.7) opens: 3.6 still applies the v2 requests
// of the WAL, and the snapshot takes them out of what a restart replays. Through 3.5 it brings etcd 3.4
// data to 3.5's (its database gets the raft term), for the step through 3.6 that follows.
//
// The member keeps its name and its data's membership (its peer and client URLs in the data are not
// touched); the old etcd listens on loopback ports of its own, so that no client reaches it and no peer
// takes it for the member while it steps: the wrapper does not serve meanwhile either. A snapshot is
// forced with --snapshot-count 1 and a lease granted and revoked (two raft entries that change no key).
//
// Only a one-member membership is stepped (the caller checks): a member of a larger cluster must be
// stepped in a rolling update of the whole cluster, which this does not do.
func (i *Initializer) stepThrough(ctx context.Context, s step) error {
	client, err := loopbackURL()
	if err != nil {
		return err
	}
	peer, err := loopbackURL()
	if err != nil {
		return err
	}
	name := i.opts.Member.Name
	// The initial-cluster flags only matter for a new member; on existing data etcd takes the membership
	// from the data. They must still be consistent with each other for etcd to accept them.
	args := []string{
		"--name", name, "--data-dir", i.opts.DataDir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", name + "=" + peer, "--snapshot-count", "1",
		// The member's own quota is not known here; etcd's default (2 GiB) could raise the NOSPACE alarm on
		// a larger database and refuse the lease that forces the snapshot.
		"--quota-backend-bytes", strconv.FormatInt(stepQuotaBackendBytes, 10),
	}
	var out syncBuffer
	cmd := exec.Command(s.binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the sidecar
	i.log.Info("Stepping the data directory through an older etcd", "version", s.version, "binary", s.binary, "clientURL", client)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd %s (%s): %w", s.version, s.binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stepErr := driveStep(ctx, s.version, client, exited)
	if stepErr == nil || !isExit(stepErr) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			// etcd's signal handler stops the server and then dies of the signal it handled.
			if err != nil && stepErr == nil && !diedOfSIGTERM(cmd) {
				stepErr = fmt.Errorf("etcd %s did not stop cleanly: %w", s.version, err)
			}
		case <-time.After(stepStopTimeout):
			_ = cmd.Process.Kill()
			killed := <-exited
			if stepErr == nil {
				stepErr = fmt.Errorf("etcd %s did not stop within %s after SIGTERM and was killed (%v)", s.version, stepStopTimeout, killed)
			}
		}
	}
	if stepErr != nil {
		return fmt.Errorf("stepping through etcd %s: %w; its output ends with: %s", s.version, stepErr, tail(out.String(), 2000))
	}
	i.log.Info("The older etcd stepped the data directory and stopped", "version", s.version)
	return nil
}

// exitError marks an error that means the old etcd exited by itself.
type exitError struct{ err error }

func (e exitError) Error() string { return fmt.Sprintf("it exited: %v", e.err) }

func isExit(err error) bool {
	var e exitError
	return errors.As(err, &e)
}

// driveStep waits until the old etcd (version) at client serves — etcd 3.6 also until it has recorded
// storage version 3.6 —, then grants and revokes a lease: entries past --snapshot-count 1, so that it
// takes a snapshot after everything it replayed.
func driveStep(ctx context.Context, version, client string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, stepReadyTimeout)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	var last string
	for {
		select {
		case err := <-exited:
			return exitError{err}
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s (last: %s)", stepReadyTimeout, last)
		case <-time.After(200 * time.Millisecond):
		}
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(attempt, client)
		cancelAttempt()
		if err != nil {
			last = err.Error()
			continue
		}
		last = "storage version " + strconv.Quote(st.StorageVersion)
		// etcd 3.5 reports no storage version: it only has to serve.
		if version != "3.6" || strings.HasPrefix(st.StorageVersion, "3.6") {
			break
		}
	}
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		return fmt.Errorf("granting a lease to force a snapshot: %w", err)
	}
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		return fmt.Errorf("revoking the lease that forces a snapshot: %w", err)
	}
	return nil
}

// diedOfSIGTERM tells whether the exited process ended by SIGTERM, as etcd does after a clean stop.
func diedOfSIGTERM(cmd *exec.Cmd) bool {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// loopbackURL is http://127.0.0.1:<a free port>.
func loopbackURL() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "http://" + l.Addr().String(), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// syncBuffer collects the output of the old etcd for the error message.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
