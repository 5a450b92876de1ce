// Package seednet is the local seed's host network: one bridge per seed instance, with the host's address
// on it (where the control plane and S3 listen), and named network namespaces attached to it, one per node
// (its kubelet, containerd and pods live there) and one per test caller that must connect from outside the
// host's namespace.
//
// It drives iproute2 (`ip`) rather than a netlink library on purpose: `ip netns add` creates and
// bind-mounts named namespaces exactly as operators expect (so `ip netns exec` works for debugging),
// and no goroutine of the seed ever has to switch its OS thread into another network namespace, which
// in a Go program is easy to get subtly wrong. A namespace costs a handful of `ip` invocations (~ms each).
package seednet

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
