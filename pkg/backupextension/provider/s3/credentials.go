// Package s3 is the backup provider for S3-compatible object stores (AWS S3, versitygw, MinIO, Ceph RGW...).
// The bucket and entry secrets carry the keys of the sidecar's S3 snapstore (upstream etcd-backup-restore's),
// so the same secret data works for managing the bucket here and for writing snapshots in the etcd pods.
package s3

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// Type is the provider type of this provider (spec.type).
const Type = "s3"

// Keys of the bucket, entry and etcd backup secrets.
const (
	DataKeyAccessKeyID     = backupsecret.KeyAccessKeyID
	DataKeySecretAccessKey = backupsecret.KeySecretAccessKey
	DataKeyRegion          = backupsecret.KeyRegion
	DataKeyEndpoint        = backupsecret.KeyEndpoint
	DataKeyForcePathStyle  = backupsecret.KeyS3ForcePathStyle
)

// connection is how to reach the store, read from a secret.
type connection struct {
	accessKeyID     string
	secretAccessKey string
	region          string
	endpoint        string
	forcePathStyle  bool
	// identity, when set, replaces the static key pair: a workload identity's role (workloadidentity.go).
	identity aws.CredentialsProvider
}

// connectionFrom reads the credentials; the spec region is the fallback for secrets without one.
func connectionFrom(data map[string][]byte, specRegion string) (connection, error) {
	c := connection{
		accessKeyID:     string(data[DataKeyAccessKeyID]),
		secretAccessKey: string(data[DataKeySecretAccessKey]),
		region:          string(data[DataKeyRegion]),
		endpoint:        string(data[DataKeyEndpoint]),
	}
	if c.accessKeyID == "" || c.secretAccessKey == "" {
		return c, fmt.Errorf("the secret must contain %q and %q", DataKeyAccessKeyID, DataKeySecretAccessKey)
	}
	if c.region == "" {
		c.region = specRegion
	}
	if c.region == "" {
		return c, fmt.Errorf("no region: set %q in the secret or spec.region", DataKeyRegion)
	}
	if raw := string(data[DataKeyForcePathStyle]); raw != "" {
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return c, fmt.Errorf("%q must be true or false: %w", DataKeyForcePathStyle, err)
		}
		c.forcePathStyle = v
	}
	return c, nil
}

// client builds an S3 client for the connection. Checksums are only sent where the protocol requires them:
// S3-compatible stores often reject the newer default checksum headers.
func (c connection) client() *awss3.Client {
	var creds aws.CredentialsProvider = credentials.NewStaticCredentialsProvider(c.accessKeyID, c.secretAccessKey, "")
	if c.identity != nil {
		creds = c.identity
	}
	return awss3.New(awss3.Options{
		Region:                     c.region,
		Credentials:                creds,
		BaseEndpoint:               optional(c.endpoint),
		UsePathStyle:               c.forcePathStyle,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// secretData is the connection as secret data, for the generated bucket secret.
func (c connection) secretData() map[string][]byte {
	data := map[string][]byte{
		DataKeyAccessKeyID:     []byte(c.accessKeyID),
		DataKeySecretAccessKey: []byte(c.secretAccessKey),
		DataKeyRegion:          []byte(c.region),
	}
	if c.endpoint != "" {
		data[DataKeyEndpoint] = []byte(c.endpoint)
	}
	if c.forcePathStyle {
		data[DataKeyForcePathStyle] = []byte("true")
	}
	return data
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
