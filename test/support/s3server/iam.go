package s3server

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/s3iam"
)

func (s *Server) iam() s3iam.Admin {
	return s3iam.Admin{Bin: s.bin, Endpoint: s.Endpoint, AccessKey: s.AccessKey, SecretKey: s.SecretKey, Region: s.Region,
		Insecure: len(s.CACertPEM) > 0}
}

// CreateUser adds a user with the admin role (it may use every bucket) and the given key pair. The server
// must run with Options.IAM.
func (s *Server) CreateUser(t testing.TB, accessKey, secretKey string) {
	t.Helper()
	if err := s.iam().CreateUser(t.Context(), accessKey, secretKey); err != nil {
		t.Fatalf("creating user %s: %v", accessKey, err)
	}
}

// DeleteUser revokes a user's key pair: requests signed with it are refused from now on (the server runs
// without an IAM cache).
func (s *Server) DeleteUser(t testing.TB, accessKey string) {
	t.Helper()
	if err := s.iam().DeleteUser(t.Context(), accessKey); err != nil {
		t.Fatalf("deleting user %s: %v", accessKey, err)
	}
}
