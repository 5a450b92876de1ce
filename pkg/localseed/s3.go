package localseed

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// s3Port is fixed: the server binds the instance's own bridge address.
const s3Port = 9000

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
	if err := os.MkdirAll(s3.Dir, 0o700); err != nil {
		return fmt.Errorf("creating S3 backend dir: %w", err)
	}
	p, err := proc.Start(proc.Spec{Path: bin, LogPath: filepath.Join(s.stateDir, "logs", "versitygw.log"), Args: []string{
		"--access", s3.AccessKey, "--secret", s3.SecretKey, "--region", s3.Region,
		"--port", net.JoinHostPort(s.network.Gateway.String(), strconv.Itoa(s3Port)), "--health", "/health", "--quiet",
		"posix", s3.Dir,
	}})
	if err != nil {
		return err
	}
	s.cp.components = append(s.cp.components, component{name: "versitygw", p: p})
	if err := waitReady(ctx, "versitygw", p, s.cp.logPath("versitygw"), httpReady(s3.Endpoint+"/health", nil)); err != nil {
		return err
	}
	s.s3 = s3
	return nil
}
