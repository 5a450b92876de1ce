package snapstore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/s3webidentity"
)

// s3Identity is an S3 store's identity other than a static key pair.
//
// With roleARN set it is a workload identity, as upstream etcd-backup-restore reads it and Gardener's AWS
// extension writes it: the role is assumed with STS AssumeRoleWithWebIdentity, presenting the token file
// of the mounted secret. The SDK reads the file on every exchange and its credentials cache exchanges
// again when the role's credentials expire, so a token that Gardener's token requestor rotates in the
// secret (and the kubelet in the mounted file) is picked up without a restart.
//
// Without roleARN it is the pod's ambient identity: the SDK's default credential chain (environment,
// EKS IRSA's AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, the node's instance role, …), for an Etcd
// without spec.backup.store.secretRef.
//
// STS is reached where AWS_ENDPOINT_URL_STS says when it is set; otherwise at the secret's endpoint when
// that is a server other than AWS (its own STS, s3webidentity.STSEndpointOf), else at AWS's regional STS;
// always through the store's HTTP client (its trusted CA applies). The exchange is s3webidentity's, shared
// with the backup extension.
type s3Identity struct {
	roleARN   string
	tokenFile string
}

// s3WebIdentityFrom reads a workload identity from the secret: nil when the secret has no roleARN, an error
// naming the key when roleARN comes without its token file.
func s3WebIdentityFrom(secret secretDir) (*s3Identity, error) {
	roleARN, ok, err := secret.optional(backupsecret.KeyRoleARN)
	if err != nil || !ok || roleARN == "" {
		return nil, err
	}
	if secret.dir == "" {
		return nil, fmt.Errorf("backup secret %s has key %q, whose token must be the file %q of a mounted secret", secret, backupsecret.KeyRoleARN, backupsecret.KeyToken)
	}
	token := secret.path(backupsecret.KeyToken)
	if _, err := os.Stat(token); err != nil {
		return nil, fmt.Errorf("backup secret %s has key %q but lacks the required key %q (the web identity token): %w",
			secret, backupsecret.KeyRoleARN, backupsecret.KeyToken, err)
	}
	return &s3Identity{roleARN: roleARN, tokenFile: token}, nil
}

// s3AmbientConfig is an S3 store without a backup secret: the bucket must be configured, the region and
// credentials come from the SDK's default chain.
func s3AmbientConfig(cfg Config) (s3Config, error) {
	if cfg.Container == "" {
		return s3Config{}, fmt.Errorf("storage provider %s without a backup secret (ambient credentials) needs --store-container", ProviderS3)
	}
	return s3Config{provider: ProviderS3, bucket: cfg.Container, endpoint: withScheme(cfg.EndpointOverride, false), identity: &s3Identity{}}, nil
}

// credentials is the provider of the store's credentials and the region to sign for.
func (c s3Config) credentials(httpClient aws.HTTPClient) (aws.CredentialsProvider, string, error) {
	if c.identity == nil {
		return credentials.NewStaticCredentialsProvider(c.accessKeyID, c.secretAccessKey, ""), c.region, nil
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithHTTPClient(httpClient)}
	if c.region != "" {
		opts = append(opts, awsconfig.WithRegion(c.region))
	}
	// Loading reads the environment and shared configuration files only; no request is made here.
	sdk, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, "", fmt.Errorf("loading the AWS SDK configuration: %w", err)
	}
	if sdk.Region == "" {
		return nil, "", errors.New("no region: without a backup secret the region comes from AWS_REGION, which is not set")
	}
	if c.identity.roleARN == "" {
		return sdk.Credentials, sdk.Region, nil
	}
	return s3webidentity.Credentials(sdk, c.endpoint, c.identity.roleARN, stscreds.IdentityTokenFile(c.identity.tokenFile)), sdk.Region, nil
}
