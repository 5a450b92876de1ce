package minioserver

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// RootClient is an S3 client with the root credentials: the administrator that sets buckets up behind a
// store's back and looks at what the store left in them.
func (s *Server) RootClient(t testing.TB) *s3.Client {
	t.Helper()
	return s3.New(s3.Options{BaseEndpoint: aws.String(s.Endpoint), Region: s.region, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: RootUser, SecretAccessKey: RootPassword}, nil
		})})
}

// CreateObjectLockBucket creates a bucket with S3 Object Lock enabled (and so versioning) and no default
// retention yet: objects uploaded before SetDefaultRetention are not locked.
func (s *Server) CreateObjectLockBucket(t testing.TB, bucket string) {
	t.Helper()
	if _, err := s.RootClient(t).CreateBucket(t.Context(), &s3.CreateBucketInput{
		Bucket: aws.String(bucket), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatalf("creating object-lock bucket %s: %v", bucket, err)
	}
}

// SetDefaultRetention locks every object uploaded from now on to bucket for days, in governance mode.
func (s *Server) SetDefaultRetention(t testing.TB, bucket string, days int32) {
	t.Helper()
	if _, err := s.RootClient(t).PutObjectLockConfiguration(t.Context(), &s3.PutObjectLockConfigurationInput{
		Bucket: aws.String(bucket),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{
			ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
				Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(days)}},
		}}); err != nil {
		t.Fatalf("setting the default retention of %s: %v", bucket, err)
	}
}

// Versions lists every version of every object in bucket: the keys of the object versions and those of the
// delete markers.
func (s *Server) Versions(t testing.TB, bucket string) (objects, deleteMarkers []string) {
	t.Helper()
	pages := s3.NewListObjectVersionsPaginator(s.RootClient(t), &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatalf("listing the versions in %s: %v", bucket, err)
		}
		for _, v := range page.Versions {
			objects = append(objects, aws.ToString(v.Key))
		}
		for _, m := range page.DeleteMarkers {
			deleteMarkers = append(deleteMarkers, aws.ToString(m.Key))
		}
	}
	return objects, deleteMarkers
}
