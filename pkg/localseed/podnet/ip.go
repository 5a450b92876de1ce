// Package podnet gives every pod of the local seed its own network namespace with one private IP on a
// per-instance host bridge, so pods bind 0.0.0.0:2379 like real pods and reach each other and the host.
//
// It drives iproute2 (`ip`) rather than a netlink library on purpose: `ip netns add` creates and
// bind-mounts named namespaces exactly as operators expect (so `ip netns exec` works for debugging),
// and no goroutine of the seed ever has to switch its OS thread into another network namespace, which
// in a Go program is easy to get subtly wrong. A pod costs a handful of `ip` invocations (~ms each).
package podnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// ipTimeout bounds every `ip` invocation; they are local kernel calls and normally take milliseconds.
const ipTimeout = 10 * time.Second

// CheckTools fails with an actionable message when iproute2 is missing.
func CheckTools() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("the local seed needs the `ip` command: install the Debian package iproute2")
	}
	return nil
}

// ip runs `ip args...` and returns its stdout, with stderr in the error.
func ip(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
