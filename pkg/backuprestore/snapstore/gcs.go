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
	bucket string
	// credentialsFile is the secret's serviceaccount.json: a service account key, or an external_account
	// configuration (workload identity) whose subject token is the secret's token file, which the SDK
	// reads anew whenever it exchanges it (Gardener's token requestor rotates it in the secret). Empty for
	// an emulator (no credentials) or, without any backup secret, for the pod's ambient identity.
	credentialsFile []byte
	credentialsType google.CredentialsType
	// ambient: no backup secret; the SDK's default credentials (GKE workload identity, the metadata server).
	ambient  bool
	endpoint string
}

func gcsConfigFrom(cfg Config, secret secretDir) (gcsConfig, error) {
	var c gcsConfig
	var err error
	c.endpoint = cfg.EndpointOverride
	if secret.absent() && c.endpoint == "" {
		if cfg.Container == "" {
			return gcsConfig{}, fmt.Errorf("storage provider %s without a backup secret (ambient credentials) needs --store-container", ProviderGCS)
		}
		return gcsConfig{bucket: cfg.Container, ambient: true}, nil
	}
	if c.endpoint == "" {
		if err := secret.checkDir(ProviderGCS); err != nil {
			return gcsConfig{}, err
		}
	}
	if c.bucket, err = containerFrom(cfg, secret, ProviderGCS, ""); err != nil {
		return gcsConfig{}, err
	}
	file, ok, err := secret.raw(gcsKeyServiceAccount)
	if err != nil {
		return gcsConfig{}, err
	}
	if !ok {
		if c.endpoint == "" {
			return gcsConfig{}, fmt.Errorf("backup secret in %s lacks the required key %q", secret.dir, gcsKeyServiceAccount)
		}
		return c, nil
	}
	c.credentialsFile = file
	switch t := backupsecret.GCSCredentialType(file); t {
	case string(google.ServiceAccount):
		c.credentialsType = google.ServiceAccount
	case backupsecret.GCSExternalAccountType:
		if err := checkGCSExternalAccount(file, secret); err != nil {
			return gcsConfig{}, err
		}
		c.credentialsType = google.ExternalAccount
	default:
		return gcsConfig{}, fmt.Errorf("key %q of the backup secret in %s: credential type %q, must be %q (a key) or %q (workload identity)",
			gcsKeyServiceAccount, secret.dir, t, google.ServiceAccount, backupsecret.GCSExternalAccountType)
	}
	// Parsing here (no network) turns a broken file into a start-up error.
	if _, err := c.credentials(context.Background()); err != nil {
		return gcsConfig{}, fmt.Errorf("key %q of the backup secret in %s: %w", gcsKeyServiceAccount, secret.dir, err)
	}
	return c, nil
}

// credentials builds the store's credentials; the token source exchanges or signs only when asked for a
// token.
func (c gcsConfig) credentials(ctx context.Context) (*google.Credentials, error) {
	if c.ambient {
		return google.FindDefaultCredentials(ctx, gcsScope)
	}
	return google.CredentialsFromJSONWithType(ctx, c.credentialsFile, c.credentialsType, gcsScope)
}

func openGCS(ctx context.Context, cfg gcsConfig, prefix string, tr transfers, log logr.Logger) (SnapStore, error) {
	opts := &gcsblob.Options{}
	var client *gcp.HTTPClient
	if len(cfg.credentialsFile) > 0 || cfg.ambient {
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
	return newBlobStore(bucket, string(ProviderGCS), cfg.bucket, prefix, tr, log), nil
}
