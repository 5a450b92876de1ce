package app

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// `local up --detach` starts `local up --detached-child` in a new session (so the terminal's Ctrl-C and
// hang-up do not reach it), relays its output until it prints detachedMarker and returns; the child
// keeps running the seed. The child's PID is in the state dir's instance record, where `local down`
// finds it.
const (
	detachedChildFlag = "detached-child"
	detachedMarker    = "--- gardener-etcd local seed detached ---"
	// detachedLog receives the child's output once the parent stopped reading it.
	detachedLog = "gardener-etcd-local.log"
)

func (o *localOptions) upDetached(cmd *cobra.Command) error {
	out := cmd.OutOrStdout()
	if err := o.checkStateDir(); err != nil {
		return err
	}
	stateDir, err := filepath.Abs(o.stateDir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating gardener-etcd for the background process: %w", err)
	}
	args := []string{"local", "up", "--state-dir", stateDir, "--nodes", strconv.Itoa(o.nodes), "--detach", "--" + detachedChildFlag}
	if o.s3 {
		args = append(args, "--s3")
	}
	if o.networkPolicies {
		args = append(args, "--network-policies")
	}
	if o.verbose {
		args = append(args, "--verbose")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	child := exec.Command(self, args...)
	child.Stdout, child.Stderr = w, w
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		_ = w.Close()
		return fmt.Errorf("starting the background process: %w", err)
	}
	_ = w.Close()

	// Ctrl-C while the seed starts: the child tears down what it started and exits; its output tells.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupts)
	go func() {
		if _, ok := <-interrupts; ok {
			_ = child.Process.Signal(syscall.SIGTERM)
		}
	}()

	if relayUntilMarker(r, out) {
		return child.Process.Release()
	}
	err = child.Wait()
	return fmt.Errorf("the local seed did not start (%v); its output is above", err)
}

// relayUntilMarker copies lines from r to out until the marker (true) or the end of r (false).
func relayUntilMarker(r io.Reader, out io.Writer) bool {
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		if scanner.Text() == detachedMarker {
			return true
		}
		fmt.Fprintln(out, scanner.Text())
	}
	return false
}

// detachOutput runs in the child once the seed is ready: it moves stdout and stderr to a log file in
// the state dir and prints the marker to the parent in between. From then on every write (ours, klog's,
// a panic's) goes to the file; writing to the pipe after the parent exited would raise SIGPIPE, which
// is ignored anyway for the moment in between.
func (o *localOptions) detachOutput(out io.Writer) error {
	signal.Ignore(syscall.SIGPIPE)
	f, err := os.OpenFile(filepath.Join(o.stateDir, "logs", detachedLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the log of the background process: %w", err)
	}
	defer f.Close()
	if err := unix.Dup3(int(f.Fd()), 2, 0); err != nil {
		return fmt.Errorf("redirecting stderr: %w", err)
	}
	fmt.Fprintln(out, detachedMarker)
	if err := unix.Dup3(int(f.Fd()), 1, 0); err != nil {
		return fmt.Errorf("redirecting stdout: %w", err)
	}
	return nil
}
