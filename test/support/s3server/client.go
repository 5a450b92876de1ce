package s3server

import (
	"context"
	"fmt"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ReverseProxy forwards requests to the server over the server's own transport, so that Stop closes
// the proxy's idle connections too (see Stop), for tests that watch or change requests on the way.
func (s *Server) ReverseProxy() *httputil.ReverseProxy {
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		panic(fmt.Sprintf("s3server: endpoint %q: %v", s.Endpoint, err)) // built by tryStart, always valid
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = s.transport
	return proxy
}

// Client is an S3 client for the server (path style, static credentials), for test set-up and checks.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		HTTPClient:   s.httpClient(0),
	})
}

// CreateBucket creates a bucket or fails the test.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.CreateBucketE(t.Context(), name); err != nil {
		t.Fatal(err)
	}
}

// CreateBucketE creates a bucket, for callers without a testing.TB.
func (s *Server) CreateBucketE(ctx context.Context, name string) error {
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("creating bucket %q on %s: %w", name, s.Endpoint, err)
	}
	return nil
}
