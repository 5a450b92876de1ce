// Package local is the backup provider that stores buckets as directories on the host, for local seeds and
// tests without an object store. The etcd sidecar's Local snapstore mounts `<hostPath>/<bucket>`, so the
// etcd backup secret carries the root directory under the key `hostPath`.
package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// Type is the provider type of this provider (spec.type).
const Type = "local"

// DataKeyHostPath is the key of the etcd backup secret that holds the root directory of the buckets.
const DataKeyHostPath = backupsecret.KeyHostPath

// DefaultRoot is where buckets live when neither the bucket nor the entry configures a directory; it is the
// default of the sidecar's Local snapstore as well.
const DefaultRoot = "/etc/gardener/local-backupbuckets"

// Config is the providerConfig of a local BackupBucket or BackupEntry and the providerStatus of a bucket.
type Config struct {
	// HostPath is the root directory; the bucket is the subdirectory named like the bucket.
	HostPath string `json:"hostPath,omitempty"`
}

// Provider stores buckets under a root directory.
type Provider struct {
	defaultRoot string
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider; defaultRoot is used when an object configures no root (DefaultRoot when empty).
func New(defaultRoot string) *Provider {
	if defaultRoot == "" {
		defaultRoot = DefaultRoot
	}
	return &Provider{defaultRoot: defaultRoot}
}

// EnsureBucket creates the bucket directory and reports the root in the provider status, from where gardenlet
// hands it to the entries.
func (p *Provider) EnsureBucket(_ context.Context, req provider.BucketRequest) (provider.BucketResult, error) {
	root, dir, err := p.bucketDir(req)
	if err != nil {
		return provider.BucketResult{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // the bucket is a hostPath the backup sidecar, another user, must traverse
		return provider.BucketResult{}, fmt.Errorf("creating bucket directory %s: %w", dir, err)
	}
	status, err := json.Marshal(Config{HostPath: root})
	if err != nil {
		return provider.BucketResult{}, err
	}
	return provider.BucketResult{
		GeneratedSecretData: map[string][]byte{DataKeyHostPath: []byte(root)},
		ProviderStatus:      &runtime.RawExtension{Raw: status},
	}, nil
}

// DeleteBucket removes the bucket directory with everything in it.
func (p *Provider) DeleteBucket(_ context.Context, req provider.BucketRequest) error {
	_, dir, err := p.bucketDir(req)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing bucket directory %s: %w", dir, err)
	}
	return nil
}

// EtcdSecretData adds the root directory as `hostPath`.
func (p *Provider) EtcdSecretData(req provider.EntryRequest) (map[string][]byte, error) {
	root, err := p.entryRoot(req)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{DataKeyHostPath: []byte(root)}, nil
}

// DeleteEntry removes `<root>/<bucket>/<entry>`.
func (p *Provider) DeleteEntry(_ context.Context, req provider.EntryRequest) error {
	root, err := p.entryRoot(req)
	if err != nil {
		return err
	}
	if err := provider.ValidatePathSegment("bucket", req.BucketName); err != nil {
		return err
	}
	if err := provider.ValidatePathSegment("backup entry", req.Name); err != nil {
		return err
	}
	dir := filepath.Join(root, req.BucketName, req.Name)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing backup entry directory %s: %w", dir, err)
	}
	return nil
}

func (p *Provider) bucketDir(req provider.BucketRequest) (root, dir string, err error) {
	if err := provider.ValidatePathSegment("bucket", req.Name); err != nil {
		return "", "", err
	}
	root, err = p.root(req.ProviderConfig)
	if err != nil {
		return "", "", err
	}
	return root, filepath.Join(root, req.Name), nil
}

// entryRoot prefers the entry's own configuration, then what the bucket reported, then the default.
func (p *Provider) entryRoot(req provider.EntryRequest) (string, error) {
	for _, raw := range []*runtime.RawExtension{req.ProviderConfig, req.BucketProviderStatus} {
		cfg, err := decode(raw)
		if err != nil {
			return "", err
		}
		if cfg.HostPath != "" {
			return cleanRoot(cfg.HostPath)
		}
	}
	return p.defaultRoot, nil
}

func (p *Provider) root(raw *runtime.RawExtension) (string, error) {
	cfg, err := decode(raw)
	if err != nil {
		return "", err
	}
	if cfg.HostPath == "" {
		return p.defaultRoot, nil
	}
	return cleanRoot(cfg.HostPath)
}

func cleanRoot(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("hostPath %q must be an absolute path", path)
	}
	return filepath.Clean(path), nil
}

func decode(raw *runtime.RawExtension) (Config, error) {
	var cfg Config
	if raw == nil || len(raw.Raw) == 0 {
		return cfg, nil
	}
	if err := json.Unmarshal(raw.Raw, &cfg); err != nil {
		return cfg, fmt.Errorf("decoding the local provider configuration: %w", err)
	}
	return cfg, nil
}
