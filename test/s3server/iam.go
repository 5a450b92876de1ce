package s3server

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// adminTimeout bounds one call of the admin client.
const adminTimeout = 30 * time.Second

// CreateUser adds a user with the admin role (it may use every bucket) and the given key pair, through
// versitygw's admin API signed with the root credentials. The server must run with Options.IAM.
func (s *Server) CreateUser(t testing.TB, accessKey, secretKey string) {
	t.Helper()
	if err := s.admin(t.Context(), "create-user", "--access", accessKey, "--secret", secretKey, "--role", "admin"); err != nil {
		t.Fatalf("creating user %s: %v", accessKey, err)
	}
}

// DeleteUser revokes a user's key pair: requests signed with it are refused from now on (the server runs
// without an IAM cache).
func (s *Server) DeleteUser(t testing.TB, accessKey string) {
	t.Helper()
	if err := s.admin(t.Context(), "delete-user", "--access", accessKey); err != nil {
		t.Fatalf("deleting user %s: %v", accessKey, err)
	}
}

// admin runs `versitygw admin <args>` against the server as root. Secrets of test users appear on its
// command line, which is acceptable for throwaway test keys only.
func (s *Server) admin(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	base := []string{"admin", "--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region, "--endpoint-url", s.Endpoint}
	if len(s.CACertPEM) > 0 {
		base = append(base, "--allow-insecure")
	}
	out, err := exec.CommandContext(ctx, s.bin, append(base, args...)...).CombinedOutput() //nolint:gosec // the test's own versitygw binary
	if err != nil {
		return fmt.Errorf("versitygw admin %s: %w: %s", args[0], err, out)
	}
	return nil
}
