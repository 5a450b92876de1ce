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

// Timeouts of a step through etcd 3.6.
const (
	stepReadyTimeout = 2 * time.Minute
	stepStopTimeout  = time.Minute
)

// stepThrough36 brings a one-member data directory that etcd 3.5 wrote to a state the etcd of this build
// (3.7) opens, without losing a write, the way etcd's upgrade rule says (one minor version at a time): it
// runs the etcd 3.6 binary Options.Step36Binary on the directory as this member until 3.6 has applied
// every entry, recorded storage version 3.6 and taken a raft snapshot after the last v2 request of the
// WAL, then stops it cleanly (SIGTERM). etcd 3.6 still applies the v2 requests; the snapshot takes them
// out of what a restart replays.
//
// The member keeps its name and its data's membership (its peer and client URLs in the data are not
// touched); etcd 3.6 listens on loopback ports of its own, so that no client reaches it and no peer takes
// it for the member while it steps: the wrapper does not serve meanwhile either. A snapshot is forced
// with --snapshot-count 1 and a lease granted and revoked (two raft entries that change no key).
//
// Only a one-member membership is stepped (the caller checks): a member of a larger cluster must be
// stepped in a rolling update of the whole cluster through 3.6, which this does not do.
func (i *Initializer) stepThrough36(ctx context.Context) error {
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
	}
	var out syncBuffer
	cmd := exec.Command(i.opts.Step36Binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the sidecar
	i.log.Info("Stepping the data directory through etcd 3.6", "binary", i.opts.Step36Binary, "clientURL", client)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd 3.6 (%s): %w", i.opts.Step36Binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stepErr := drive36(ctx, client, exited)
	if stepErr == nil || !isExit(stepErr) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			// etcd's signal handler stops the server and then dies of the signal it handled.
			if err != nil && stepErr == nil && !diedOfSIGTERM(cmd) {
				stepErr = fmt.Errorf("etcd 3.6 did not stop cleanly: %w", err)
			}
		case <-time.After(stepStopTimeout):
			_ = cmd.Process.Kill()
			killed := <-exited
			if stepErr == nil {
				stepErr = fmt.Errorf("etcd 3.6 did not stop within %s after SIGTERM and was killed (%v)", stepStopTimeout, killed)
			}
		}
	}
	if stepErr != nil {
		return fmt.Errorf("stepping through etcd 3.6: %w; its output ends with: %s", stepErr, tail(out.String(), 2000))
	}
	i.log.Info("etcd 3.6 stepped the data directory and stopped")
	return nil
}

// exitError marks an error that means etcd 3.6 exited by itself.
type exitError struct{ err error }

func (e exitError) Error() string { return fmt.Sprintf("etcd 3.6 exited: %v", e.err) }

func isExit(err error) bool {
	var e exitError
	return errors.As(err, &e)
}

// drive36 waits until etcd 3.6 at client serves, has storage version 3.6 and has taken a snapshot after
// what it replayed (a lease granted and revoked adds entries past --snapshot-count 1).
func drive36(ctx context.Context, client string, exited <-chan error) error {
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
			return fmt.Errorf("etcd 3.6 did not record storage version 3.6 within %s (last: %s)", stepReadyTimeout, last)
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
		if strings.HasPrefix(st.StorageVersion, "3.6") {
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

// syncBuffer collects the output of etcd 3.6 for the error message.
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
