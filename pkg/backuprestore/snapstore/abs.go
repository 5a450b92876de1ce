package snapstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/go-logr/logr"
	"gocloud.dev/blob/azureblob"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// Keys of the ABS backup secret.
const (
	absKeyStorageAccount = backupsecret.KeyStorageAccount
	absKeyStorageKey     = backupsecret.KeyStorageKey
	absKeyDomain         = backupsecret.KeyDomain
)

// defaultABSDomain is the public Azure cloud's blob domain; sovereign clouds set the domain key.
const defaultABSDomain = "blob.core.windows.net"

// absConfig is the resolved configuration of an Azure Blob Storage store.
type absConfig struct {
	container    string
	account      string
	key          string // base64, as Azure shows it
	containerURL string
}

// absConfigFrom resolves the container URL: https://<account>.<domain>/<container>, or, with an
// endpoint override (Azurite and other emulators, which address accounts by path),
// <endpoint>/<account>/<container>.
func absConfigFrom(cfg Config, secret secretDir) (absConfig, error) {
	if err := secret.checkDir(ProviderABS); err != nil {
		return absConfig{}, err
	}
	var c absConfig
	var err error
	if c.container, err = containerFrom(cfg, secret, ProviderABS, ""); err != nil {
		return absConfig{}, err
	}
	if c.account, err = secret.required(absKeyStorageAccount); err != nil {
		return absConfig{}, err
	}
	if c.key, err = secret.required(absKeyStorageKey); err != nil {
		return absConfig{}, err
	}
	if _, err := base64.StdEncoding.DecodeString(c.key); err != nil {
		return absConfig{}, fmt.Errorf("key %q of the backup secret in %s is not base64: %w", absKeyStorageKey, secret.dir, err)
	}
	domain, ok, err := secret.optional(absKeyDomain)
	if err != nil {
		return absConfig{}, err
	}
	if !ok || domain == "" {
		domain = defaultABSDomain
	}
	if cfg.EndpointOverride != "" {
		base := strings.TrimSuffix(cfg.EndpointOverride, "/")
		if _, err := url.Parse(base); err != nil {
			return absConfig{}, fmt.Errorf("ABS endpoint override %q: %w", cfg.EndpointOverride, err)
		}
		c.containerURL = fmt.Sprintf("%s/%s/%s", base, c.account, c.container)
	} else {
		c.containerURL = fmt.Sprintf("https://%s.%s/%s", c.account, domain, c.container)
	}
	return c, nil
}

func (c absConfig) client() (*container.Client, error) {
	cred, err := azblob.NewSharedKeyCredential(c.account, c.key)
	if err != nil {
		return nil, fmt.Errorf("ABS credentials of account %s: %w", c.account, err)
	}
	return container.NewClientWithSharedKeyCredential(c.containerURL, cred, nil)
}

func openABS(ctx context.Context, cfg absConfig, prefix string, tr transfers, log logr.Logger) (SnapStore, error) {
	client, err := cfg.client()
	if err != nil {
		return nil, fmt.Errorf("configuring ABS client for %s: %w", cfg.containerURL, err)
	}
	bucket, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("opening ABS container %s: %w", cfg.containerURL, err)
	}
	return newBlobStore(bucket, string(ProviderABS), cfg.container, prefix, tr, log), nil
}
