package snapstore

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// OSS (Alibaba Cloud Object Storage Service) is reached through its S3-compatible API with the AWS SDK,
// like S3 (see docs/concepts.md, "Backups", for why not Alibaba's own SDK). What differs from S3:
//   - the endpoint is the secret's storageEndpoint, e.g. oss-eu-central-1.aliyuncs.com;
//   - requests are signed (Signature V4) for the region the endpoint names, eu-central-1;
//   - buckets are addressed virtual-hosted style (<bucket>.oss-<region>.aliyuncs.com); OSS refuses
//     path-style requests;
//   - CopyObject copies objects of up to 1 GiB only; larger staged uploads are copied in parts.
const ossMaxSingleCopy = 1 << 30

// ossEndpointHost matches the documented endpoint host names: oss-<region>.aliyuncs.com, its -internal
// variant and the s3.oss-<region> form of the S3-compatible endpoints.
var ossEndpointHost = regexp.MustCompile(`^(?:s3\.)?oss-([a-z0-9-]+?)(?:-internal)?\.aliyuncs\.com$`)

// ossConfigFrom resolves an OSS store from the OSS secret format: storageEndpoint, accessKeyID and
// accessKeySecret. --store-endpoint-override replaces the address requests go to; the region is still
// the one storageEndpoint names.
func ossConfigFrom(cfg Config, secret secretDir) (s3Config, error) {
	if err := secret.checkDir(ProviderOSS); err != nil {
		return s3Config{}, err
	}
	c := s3Config{provider: ProviderOSS, maxSingleCopy: ossMaxSingleCopy}
	var err error
	if c.bucket, err = containerFrom(cfg, secret, ProviderOSS, ""); err != nil {
		return s3Config{}, err
	}
	var storageEndpoint string
	if err := secret.requiredInto(map[string]*string{
		backupsecret.KeyStorageEndpoint: &storageEndpoint, backupsecret.KeyAccessKeyID: &c.accessKeyID, backupsecret.KeyAccessKeySecret: &c.secretAccessKey,
	}); err != nil {
		return s3Config{}, err
	}
	c.endpoint = withScheme(storageEndpoint, false)
	if c.region, err = ossRegion(c.endpoint); err != nil {
		return s3Config{}, fmt.Errorf("key %q of the backup secret %s: %w", backupsecret.KeyStorageEndpoint, secret, err)
	}
	if cfg.EndpointOverride != "" {
		c.endpoint = withScheme(cfg.EndpointOverride, false)
	}
	return c, nil
}

// ossRegion is the region an OSS endpoint URL names.
func ossRegion(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %w", endpoint, err)
	}
	m := ossEndpointHost.FindStringSubmatch(u.Hostname())
	if m == nil || m[1] == "accelerate" || m[1] == "accelerate-overseas" {
		return "", fmt.Errorf("cannot tell the region from endpoint %q: want a regional endpoint oss-<region>[-internal].aliyuncs.com", endpoint)
	}
	return m[1], nil
}
