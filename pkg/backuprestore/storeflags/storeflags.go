package storeflags

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// EnvStorageContainer holds the container when --store-container is not given (with the variable prefix
// of the store, e.g. SOURCE_STORAGE_CONTAINER): upstream druid passes it so.
const EnvStorageContainer = "STORAGE_CONTAINER"

// Store binds one store's flags. Create it with Bind; after the flags are parsed, Config resolves the
// credentials directory from the environment.
type Store struct {
	flagPrefix, envPrefix string
	provider              string
	cfg                   *snapstore.Config
	// LookupEnv reads the environment; nil means os.LookupEnv. Tests replace it.
	LookupEnv func(string) (string, bool)
}

// Bind registers --<flagPrefix>storage-provider, --<flagPrefix>store-container,
// --<flagPrefix>store-prefix, --<flagPrefix>store-endpoint-override, --<flagPrefix>store-secret-dir and
// --<flagPrefix>download-stall-timeout on fs, writing into cfg. The credentials directory is looked up in
// envPrefix + the provider's variable unless --<flagPrefix>store-secret-dir is given. Upload tuning
// (--min-chunk-size, --max-parallel-chunk-uploads, --upload-stall-timeout) is bound only for the
// unprefixed (written) store.
func Bind(fs *pflag.FlagSet, cfg *snapstore.Config, flagPrefix, envPrefix string) *Store {
	s := &Store{flagPrefix: flagPrefix, envPrefix: envPrefix, cfg: cfg}
	what := "the store"
	if flagPrefix != "" {
		what = "the " + flagPrefix[:len(flagPrefix)-1] + " store"
	}
	fs.StringVar(&s.provider, flagPrefix+podwire.FlagStorageProvider, string(cfg.Provider),
		"object store provider of "+what+" (Local, S3, ABS, GCS, Swift, OSS, ECS, OCS or an alias such as aws); empty means no store")
	fs.StringVar(&cfg.Container, flagPrefix+podwire.FlagStoreContainer, cfg.Container,
		"bucket of "+what+" (Local: directory below $HOME); empty means $"+envPrefix+EnvStorageContainer+", else the secret's bucketName")
	fs.StringVar(&cfg.Prefix, flagPrefix+podwire.FlagStorePrefix, cfg.Prefix, "path of the cluster's snapshots inside the container of "+what)
	fs.StringVar(&cfg.EndpointOverride, flagPrefix+podwire.FlagStoreEndpointOverride, cfg.EndpointOverride,
		"endpoint of "+what+" (S3-compatible servers, emulators); overrides the secret's endpoint")
	fs.StringVar(&cfg.SecretDir, flagPrefix+"store-secret-dir", cfg.SecretDir,
		"directory of the mounted backup secret of "+what+"; default: the provider's "+envPrefix+"*_APPLICATION_CREDENTIALS variable (ECS: its keys in "+envPrefix+"ECS_ENDPOINT, …)")
	fs.DurationVar(&cfg.DownloadStallTimeout, flagPrefix+"download-stall-timeout", cfg.DownloadStallTimeout,
		"give up a download or listing of "+what+" once it has held one request, or one read of an object, this long (0: 5m)")
	if flagPrefix == "" {
		fs.IntVar(&cfg.Upload.ChunkSize, "min-chunk-size", cfg.Upload.ChunkSize, "part size in bytes of multipart uploads (0: default)")
		fs.IntVar(&cfg.Upload.MaxParallelChunks, "max-parallel-chunk-uploads", cfg.Upload.MaxParallelChunks, "parts uploaded concurrently (0: default)")
		fs.DurationVar(&cfg.Upload.StallTimeout, "upload-stall-timeout", cfg.Upload.StallTimeout,
			"give up an upload the store has held this long without the upload asking for more bytes (0: 5m)")
	}
	return s
}

// Configured tells whether a provider was given, i.e. whether the command has a store at all (the
// sidecar runs without one when the Etcd has no backup store).
func (s *Store) Configured() bool { return s.provider != "" }

// Config completes and returns the bound configuration: the provider and, unless given by flag, the
// container from $<envPrefix>STORAGE_CONTAINER and the credentials directory from the provider's
// environment variable.
func (s *Store) Config() (snapstore.Config, error) {
	if s.provider == "" {
		return snapstore.Config{}, fmt.Errorf("--%sstorage-provider is required", s.flagPrefix)
	}
	s.cfg.Provider = druidv1alpha1.StorageProvider(s.provider)
	provider, err := snapstore.CanonicalProvider(s.cfg.Provider)
	if err != nil {
		return snapstore.Config{}, fmt.Errorf("--%sstorage-provider: %w", s.flagPrefix, err)
	}
	if s.cfg.Container == "" {
		// Upstream druid passes the container in the environment rather than as a flag.
		if v, ok := s.lookup(s.envPrefix + EnvStorageContainer); ok {
			s.cfg.Container = v
		}
	}
	if provider == snapstore.ProviderECS {
		s.cfg.SecretValues = s.ecsKeysFromEnv()
	}
	if s.cfg.SecretDir == "" {
		if name, ok := backupsecret.CredentialsEnv[druidv1alpha1.StorageProvider(provider)]; ok {
			if v, ok := s.lookup(s.envPrefix + name); ok && v != "" {
				s.cfg.SecretDir = v
				// GCS's variable names serviceaccount.json (druid sets it so); a directory is accepted too.
				if provider == snapstore.ProviderGCS {
					if info, err := os.Stat(v); err != nil || !info.IsDir() {
						s.cfg.SecretDir = filepath.Dir(v)
					}
				}
			}
		}
	}
	return *s.cfg, nil
}

// ecsKeysFromEnv reads the ECS secret keys upstream druid passes as variables of their own
// (backupsecret.ECSKeyEnv); nil when none is set.
func (s *Store) ecsKeysFromEnv() map[string]string {
	var values map[string]string
	for _, k := range backupsecret.ECSKeyEnv {
		if v, ok := s.lookup(s.envPrefix + k.Env); ok && v != "" {
			if values == nil {
				values = map[string]string{}
			}
			values[k.Key] = v
		}
	}
	return values
}

func (s *Store) lookup(name string) (string, bool) {
	if s.LookupEnv != nil {
		return s.LookupEnv(name)
	}
	return os.LookupEnv(name)
}
