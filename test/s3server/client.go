package s3server

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

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
