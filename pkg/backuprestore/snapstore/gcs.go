package snapstore

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// gcsKeyServiceAccount is the GCS backup secret's key holding a service account key file.
const gcsKeyServiceAccount = backupsecret.KeyServiceAccount

// gcsScope is the least OAuth scope that can list, read, write and delete objects.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"

// gcsConfig is the resolved configuration of a Google Cloud Storage store.
type gcsConfig struct {
	bucket         string
	serviceAccount []byte // JSON key file; empty only with an endpoint (emulators need no credentials)
	endpoint       string
}

func gcsConfigFrom(cfg Config, secret secretDir) (gcsConfig, error) {
	var c gcsConfig
	var err error
	if cfg.EndpointOverride == "" {
		if err := secret.checkDir(ProviderGCS); err != nil {
			return gcsConfig{}, err
		}
	}
	if c.bucket, err = containerFrom(cfg, secret, ProviderGCS, ""); err != nil {
		return gcsConfig{}, err
	}
	c.endpoint = cfg.EndpointOverride
	sa, ok, err := secret.raw(gcsKeyServiceAccount)
	if err != nil {
		return gcsConfig{}, err
	}
	if !ok && c.endpoint == "" {
		return gcsConfig{}, fmt.Errorf("backup secret in %s lacks the required key %q", secret.dir, gcsKeyServiceAccount)
	}
	c.serviceAccount = sa
	if ok {
		// Parsing here (no network) turns a broken key file into a start-up error.
		if _, err := c.credentials(context.Background()); err != nil {
			return gcsConfig{}, fmt.Errorf("key %q of the backup secret in %s: %w", gcsKeyServiceAccount, secret.dir, err)
		}
	}
	return c, nil
}

func (c gcsConfig) credentials(ctx context.Context) (*google.Credentials, error) {
	return google.CredentialsFromJSONWithType(ctx, c.serviceAccount, google.ServiceAccount, gcsScope)
}

func openGCS(ctx context.Context, cfg gcsConfig, prefix string, upload UploadOptions, log logr.Logger) (SnapStore, error) {
	opts := &gcsblob.Options{}
	var client *gcp.HTTPClient
	if len(cfg.serviceAccount) > 0 {
		creds, err := cfg.credentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("GCS credentials for bucket %s: %w", cfg.bucket, err)
		}
		if client, err = gcp.NewHTTPClient(gcp.DefaultTransport(), creds.TokenSource); err != nil {
			return nil, fmt.Errorf("GCS client for bucket %s: %w", cfg.bucket, err)
		}
	} else {
		client = &gcp.HTTPClient{}
		opts.ClientOptions = append(opts.ClientOptions, option.WithoutAuthentication())
	}
	if cfg.endpoint != "" {
		opts.ClientOptions = append(opts.ClientOptions, option.WithEndpoint(cfg.endpoint))
	}
	bucket, err := gcsblob.OpenBucket(ctx, client, cfg.bucket, opts)
	if err != nil {
		return nil, fmt.Errorf("opening GCS bucket %s: %w", cfg.bucket, err)
	}
	return newBlobStore(bucket, string(ProviderGCS), cfg.bucket, prefix, upload, log), nil
}
