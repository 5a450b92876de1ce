// Package s3iam manages the users of a versitygw S3 server (the local seed's store and the tests' S3
// server) through its admin API, so that backup credentials can be rotated and revoked the way a
// provider's IAM does. The server must run with an IAM backend (--iam-dir) and, for revocations to take
// effect at once, without its IAM cache (--iam-cache-disable).
package s3iam

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// callTimeout bounds one admin call.
const callTimeout = 30 * time.Second

// Admin calls `versitygw admin` signed with the server's root credentials.
type Admin struct {
	// Bin is the versitygw binary; its admin subcommand is the client.
	Bin string
	// Endpoint is the server's base URL.
	Endpoint string
	// AccessKey, SecretKey and Region are the root credentials.
	AccessKey, SecretKey, Region string
	// Insecure skips verifying the server's certificate (a self-signed test server).
	Insecure bool
}

// CreateUser adds a user with the admin role (it may use every bucket) and the given key pair.
func (a Admin) CreateUser(ctx context.Context, accessKey, secretKey string) error {
	return a.run(ctx, "create-user", "--access", accessKey, "--secret", secretKey, "--role", "admin")
}

// DeleteUser revokes a user's key pair: requests signed with it are refused from now on.
func (a Admin) DeleteUser(ctx context.Context, accessKey string) error {
	return a.run(ctx, "delete-user", "--access", accessKey)
}

// run runs `versitygw admin <args>`. Secrets of the users appear on its command line, which is acceptable
// for the throwaway keys of a local seed or a test only.
func (a Admin) run(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	base := []string{"admin", "--access", a.AccessKey, "--secret", a.SecretKey, "--region", a.Region, "--endpoint-url", a.Endpoint}
	if a.Insecure {
		base = append(base, "--allow-insecure")
	}
	out, err := exec.CommandContext(ctx, a.Bin, append(base, args...)...).CombinedOutput() //nolint:gosec // the seed's or the test's own versitygw binary
	if err != nil {
		return fmt.Errorf("versitygw admin %s: %w: %s", args[0], err, out)
	}
	return nil
}
