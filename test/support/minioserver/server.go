package minioserver

import (
	"crypto/sha1" //nolint:gosec // MinIO derives a role's ID with SHA-1; not a security use here
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// BinaryEnv overrides where the MinIO binary is looked up, for runs outside the repository.
const BinaryEnv = "MINIO_BIN"

// The root credentials of every server started here: the admin that creates buckets behind a store's back.
const (
	RootUser     = "minio-root"
	RootPassword = "minio-root-secret"
)

// Config is what a test needs of the server.
type Config struct {
	// Region is the site region MinIO signs for and puts into role ARNs.
	Region string
	// OpenID, when set, makes MinIO trust an OpenID issuer for AssumeRoleWithWebIdentity.
	OpenID *OpenID
	// Host is the address the S3 (and STS) endpoint binds; empty means 127.0.0.1. A local seed's pods reach
	// the host on its pod bridge address (localseed.Seed.BridgeIP).
	Host string
}

// OpenID is one OpenID provider configuration of MinIO with a role policy: tokens whose audience is
// ClientID get the credentials of RolePolicy (a MinIO policy name such as the built-in "readwrite").
type OpenID struct {
	ConfigURL  string // the issuer's /.well-known/openid-configuration
	ClientID   string
	RolePolicy string
}

// Server is a running MinIO.
type Server struct {
	// Endpoint is the S3 (and STS) endpoint, http://<Config.Host>:<port>.
	Endpoint string
	// RoleARN is the ARN of Config.OpenID's role (empty without OpenID), as MinIO derives it.
	RoleARN string

	proc   *childproc.Process
	dir    string
	region string
}

// Start runs a server for t and stops it at the end of the test. Without the binary the test skips under
// -short and fails otherwise (childproc.ForTest).
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	return childproc.ForTest(t, "MinIO", func() (*Server, error) { return StartProcess(cfg) })
}

// StartProcess runs a server outside a test's lifetime; the caller must Stop it.
func StartProcess(cfg Config) (*Server, error) {
	bin, err := childproc.FindBinary("minio", BinaryEnv)
	if err != nil {
		return nil, err
	}
	return childproc.StartRetrying(func() (*Server, error) { return tryStart(bin, cfg) })
}

func tryStart(bin string, cfg Config) (*Server, error) {
	port, err := freeport.Reserve()
	if err != nil {
		return nil, err
	}
	console, err := freeport.Reserve()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "minioserver-")
	if err != nil {
		return nil, err
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	address := net.JoinHostPort(host, strconv.Itoa(port))
	s := &Server{Endpoint: "http://" + address, dir: dir, region: cfg.Region}
	env := []string{"MINIO_ROOT_USER=" + RootUser, "MINIO_ROOT_PASSWORD=" + RootPassword,
		"MINIO_SITE_REGION=" + cfg.Region, "MINIO_BROWSER=off"}
	if o := cfg.OpenID; o != nil {
		env = append(env, "MINIO_IDENTITY_OPENID_CONFIG_URL="+o.ConfigURL,
			"MINIO_IDENTITY_OPENID_CLIENT_ID="+o.ClientID, "MINIO_IDENTITY_OPENID_ROLE_POLICY="+o.RolePolicy)
		s.RoleARN = roleARN(cfg.Region, o.ClientID)
	}
	s.proc, err = childproc.Start(childproc.Spec{
		Binary: bin,
		Args: []string{"server", dir, "--address", address,
			"--console-address", net.JoinHostPort("127.0.0.1", strconv.Itoa(console)), "--quiet"},
		Env: env,
		// A developer's MinIO settings (MINIO_*) or AWS credentials must not change the server under test.
		DropEnvPrefixes: []string{"MINIO_", "AWS_"},
		Dir:             dir,
		Ready:           childproc.HTTPReady(s.Endpoint+"/minio/health/ready", 200),
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cfg.OpenID != nil {
		if err := s.waitForRole(); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// roleARN is the ARN MinIO gives the role of an OpenID configuration with a role policy:
// arn:minio:iam:<region>::role/<base64url(sha1(client ID))>.
func roleARN(region, clientID string) string {
	sum := sha1.Sum([]byte(clientID)) //nolint:gosec // see import
	return fmt.Sprintf("arn:minio:iam:%s::role/%s", region, base64.RawURLEncoding.EncodeToString(sum[:]))
}

// Stop terminates the server and removes its data directory.
func (s *Server) Stop() error {
	return errors.Join(s.proc.Stop(), os.RemoveAll(s.dir))
}
