package localseed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/s3iam"
)

// s3Port is fixed: the server binds the instance's own bridge address.
const s3Port = 9000

// s3Component names the S3 server among the control-plane components and its log file.
const s3Component = "versitygw"

// S3 describes the seed's S3 server, for BackupBucket secrets and tests.
type S3 struct {
	// Endpoint is the base URL (path-style), reachable from the host and from pods.
	Endpoint string
	// AccessKey, SecretKey and Region are the root credentials.
	AccessKey, SecretKey, Region string
	// Dir is the POSIX backend: bucket b's object k is the file Dir/b/k.
	Dir string
}

func (s *Seed) startS3(ctx context.Context) error {
	bin := filepath.Join(s.opts.BinDir, "versitygw")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("versitygw not found in %s: run `make tools` first", s.opts.BinDir)
	}
	s3 := &S3{
		Endpoint:  "http://" + net.JoinHostPort(s.network.Gateway.String(), strconv.Itoa(s3Port)),
		AccessKey: "localseed-access-key", SecretKey: "localseed-secret-key", Region: "us-east-1",
		Dir: filepath.Join(s.stateDir, "s3"),
	}
	// Users besides root live in iamDir, so that backup credentials can be rotated and revoked (S3Users);
	// without the IAM cache a deleted user is refused at once.
	iamDir := filepath.Join(s.stateDir, "s3-iam")
	for _, dir := range []string{s3.Dir, iamDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating S3 dir: %w", err)
		}
	}
	s.s3Spec = proc.Spec{Path: bin, LogPath: filepath.Join(s.stateDir, "logs", "versitygw.log"), Args: []string{
		"--access", s3.AccessKey, "--secret", s3.SecretKey, "--region", s3.Region,
		"--port", net.JoinHostPort(s.network.Gateway.String(), strconv.Itoa(s3Port)), "--health", "/health", "--quiet",
		"--iam-dir", iamDir, "--iam-cache-disable",
		"posix", s3.Dir,
	}}
	if err := s.runS3(ctx, s3.Endpoint); err != nil {
		return err
	}
	s.s3 = s3
	return nil
}

// S3Users manages the users of the seed's S3 server besides root (key rotation and revocation).
func (s *Seed) S3Users() (s3iam.Admin, error) {
	if s.s3 == nil {
		return s3iam.Admin{}, errors.New("the local seed runs without its S3 server")
	}
	return s3iam.Admin{Bin: s.s3Spec.Path, Endpoint: s.s3.Endpoint, AccessKey: s.s3.AccessKey, SecretKey: s.s3.SecretKey, Region: s.s3.Region}, nil
}

// runS3 starts versitygw from s.s3Spec as a control-plane component (so Stop ends it) and waits until it
// answers its health check.
func (s *Seed) runS3(ctx context.Context, endpoint string) error {
	p, err := proc.Start(s.s3Spec)
	if err != nil {
		return err
	}
	s.cp.components = append(s.cp.components, component{name: s3Component, p: p})
	return waitReady(ctx, s3Component, p, s.cp.logPath(s3Component), httpReady(endpoint+"/health", nil))
}

// StopS3 stops the S3 server, as a backup store outage: its address refuses connections until StartS3.
// The stored objects stay. Stopping a stopped server does nothing.
func (s *Seed) StopS3() error {
	s.componentsMu.Lock()
	defer s.componentsMu.Unlock()
	if s.s3 == nil {
		return errors.New("the local seed runs without its S3 server")
	}
	for i, c := range s.cp.components {
		if c.name == s3Component {
			s.cp.components = append(s.cp.components[:i], s.cp.components[i+1:]...)
			if err := c.p.Stop(componentStopGrace); err != nil {
				return fmt.Errorf("stopping %s: %w", s3Component, err)
			}
			return nil
		}
	}
	return nil
}

// StartS3 starts the S3 server again after StopS3, on the same address with the same objects, and
// returns once it answers. Starting a running server does nothing.
func (s *Seed) StartS3(ctx context.Context) error {
	s.componentsMu.Lock()
	defer s.componentsMu.Unlock()
	if s.s3 == nil {
		return errors.New("the local seed runs without its S3 server")
	}
	for _, c := range s.cp.components {
		if c.name == s3Component {
			return nil
		}
	}
	return s.runS3(ctx, s.s3.Endpoint)
}
