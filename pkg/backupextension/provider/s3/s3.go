package s3

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
)

// Provider manages buckets and entries on an S3-compatible endpoint.
type Provider struct{}

var _ provider.Provider = Provider{}

// New returns the S3 provider; it holds no state because every request brings its own credentials.
func New() Provider { return Provider{} }

// EnsureBucket creates the bucket when it is missing and returns the connection data for the generated secret.
func (Provider) EnsureBucket(ctx context.Context, req provider.BucketRequest) (provider.BucketResult, error) {
	conn, err := connectionFrom(req.Credentials, req.Region)
	if err != nil {
		return provider.BucketResult{}, err
	}
	c := conn.client()
	exists, err := bucketExists(ctx, c, req.Name)
	if err != nil {
		return provider.BucketResult{}, err
	}
	if !exists {
		if err := createBucket(ctx, c, req.Name, conn.region); err != nil {
			return provider.BucketResult{}, err
		}
	}
	return provider.BucketResult{GeneratedSecretData: conn.secretData()}, nil
}

// DeleteBucket deletes every object and then the bucket.
func (Provider) DeleteBucket(ctx context.Context, req provider.BucketRequest) error {
	conn, err := connectionFrom(req.Credentials, req.Region)
	if err != nil {
		return err
	}
	c := conn.client()
	if err := deletePrefix(ctx, c, req.Name, ""); err != nil {
		return err
	}
	if _, err := c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(req.Name)}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting bucket %q: %w", req.Name, err)
	}
	return nil
}

// EtcdSecretData adds the region when the entry secret has none, since the sidecar needs one to sign
// requests, and for workload-identity credentials the role the sidecar assumes with its token (and where
// an S3-compatible store is, when the configuration says).
func (Provider) EtcdSecretData(req provider.EntryRequest) (map[string][]byte, error) {
	data := map[string][]byte{}
	if len(req.Credentials[DataKeyRegion]) == 0 && req.Region != "" {
		data[DataKeyRegion] = []byte(req.Region)
	}
	wi, err := workloadIdentityFrom(req.Credentials)
	if err != nil {
		return nil, err
	}
	if wi != nil {
		maps.Copy(data, wi.etcdSecretData())
	}
	return data, nil
}

// DeleteEntry deletes every object under `<entry>/`, with the entry's static keys or, for a workload
// identity, as its role assumed with the entry secret's token (as Gardener's provider extensions do).
func (Provider) DeleteEntry(ctx context.Context, req provider.EntryRequest) error {
	if err := provider.ValidatePathSegment("backup entry", req.Name); err != nil {
		return err
	}
	conn, err := entryConnection(ctx, req)
	if err != nil {
		return err
	}
	return deletePrefix(ctx, conn.client(), req.BucketName, req.Name+"/")
}

// entryConnection reaches the store with the entry's credentials: its workload identity, or its static keys.
func entryConnection(ctx context.Context, req provider.EntryRequest) (connection, error) {
	wi, err := workloadIdentityFrom(req.Credentials)
	if err != nil {
		return connection{}, err
	}
	if wi != nil {
		return wi.connection(ctx, req)
	}
	return connectionFrom(req.Credentials, req.Region)
}

func bucketExists(ctx context.Context, c *awss3.Client, bucket string) (bool, error) {
	_, err := c.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(bucket)})
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("checking bucket %q: %w", bucket, err)
	}
}

func createBucket(ctx context.Context, c *awss3.Client, bucket, region string) error {
	in := &awss3.CreateBucketInput{Bucket: aws.String(bucket)}
	// us-east-1 is the one region S3 refuses as an explicit location constraint.
	if region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err := c.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("creating bucket %q: %w", bucket, err)
	}
	return nil
}

// isNotFound recognises a missing bucket or key; HeadBucket answers without a body, so only the code is known.
func isNotFound(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NotFound", "NoSuchBucket", "NoSuchKey":
			return true
		}
	}
	return false
}
