package snapstore

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// ecsRegion is the region ECS signs for: Dell ECS has no regions, and the upstream sidecar signs its
// requests for this one.
const ecsRegion = "US-Standard"

// s3CompatibleConfigFrom resolves an ECS (Dell ECS) or OCS (OpenShift Container Storage / NooBaa) store:
// both speak the S3 API and are addressed path-style, as the upstream sidecar does, at the secret's
// endpoint (--store-endpoint-override replaces it). Their secrets hold endpoint, accessKeyID and
// secretAccessKey, OCS also region (ECS has none), and optionally disableSSL (an endpoint without scheme
// is then reached over plain HTTP) and insecureSkipVerify.
func s3CompatibleConfigFrom(cfg Config, secret secretDir, provider Provider) (s3Config, error) {
	if err := secret.checkDir(provider); err != nil {
		return s3Config{}, err
	}
	c := s3Config{provider: provider, forcePathStyle: true, region: ecsRegion}
	var err error
	if c.bucket, err = containerFrom(cfg, secret, provider, ""); err != nil {
		return s3Config{}, err
	}
	keys := map[string]*string{
		backupsecret.KeyEndpoint: &c.endpoint, backupsecret.KeyAccessKeyID: &c.accessKeyID, backupsecret.KeySecretAccessKey: &c.secretAccessKey,
	}
	if provider == ProviderOCS {
		keys[backupsecret.KeyRegion] = &c.region
	}
	if err := secret.requiredInto(keys); err != nil {
		return s3Config{}, err
	}
	disableSSL, err := secret.boolean(backupsecret.KeyDisableSSL)
	if err != nil {
		return s3Config{}, err
	}
	if cfg.EndpointOverride != "" {
		c.endpoint = cfg.EndpointOverride
	}
	c.endpoint = withScheme(c.endpoint, disableSSL)
	if c.insecureSkipVerify, err = secret.boolean(backupsecret.KeyInsecureSkipVerify); err != nil {
		return s3Config{}, err
	}
	return c, nil
}
