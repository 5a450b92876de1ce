package s3

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/s3webidentity"
)

// DataKeyWorkloadIdentityConfig is where a workload-identity entry secret carries the provider's
// configuration: for AWS a WorkloadIdentityConfig naming the role to assume.
const DataKeyWorkloadIdentityConfig = "config"

// workloadIdentityConfig is what the s3 provider reads of a workload-identity configuration: AWS's
// WorkloadIdentityConfig (the role), and for an S3-compatible store other than AWS where it is. A
// workload-identity entry secret carries nothing but this configuration, so an S3-compatible store's
// endpoint can only come from here.
type workloadIdentityConfig struct {
	RoleARN          string `json:"roleARN"`
	Endpoint         string `json:"endpoint,omitempty"`
	S3ForcePathStyle bool   `json:"s3ForcePathStyle,omitempty"`
}

// workloadIdentityFrom reads the workload-identity configuration of an entry: nil for static credentials.
// The sidecar assumes the role with the token gardenlet's token requestor writes next to it (STS
// AssumeRoleWithWebIdentity), so a configuration without a role leaves the etcd without credentials and is
// refused naming the key.
func workloadIdentityFrom(credentials map[string][]byte) (*workloadIdentityConfig, error) {
	config, ok := credentials[DataKeyWorkloadIdentityConfig]
	if !ok {
		return nil, nil
	}
	var wi workloadIdentityConfig
	if err := yaml.Unmarshal(config, &wi); err != nil {
		return nil, fmt.Errorf("reading the workload identity configuration (secret key %q): %w", DataKeyWorkloadIdentityConfig, err)
	}
	if wi.RoleARN == "" {
		return nil, fmt.Errorf("the workload identity configuration (secret key %q) names no %s", DataKeyWorkloadIdentityConfig, backupsecret.KeyRoleARN)
	}
	return &wi, nil
}

// etcdSecretData are the keys of the etcd backup secret the sidecar's S3 store reads for this identity.
func (wi *workloadIdentityConfig) etcdSecretData() map[string][]byte {
	data := map[string][]byte{backupsecret.KeyRoleARN: []byte(wi.RoleARN)}
	if wi.Endpoint != "" {
		data[DataKeyEndpoint] = []byte(wi.Endpoint)
	}
	if wi.S3ForcePathStyle {
		data[DataKeyForcePathStyle] = []byte(strconv.FormatBool(true))
	}
	return data
}

// errNoToken reports a workload-identity entry secret that holds no token yet.
var errNoToken = errors.New("the workload-identity entry secret has no token yet (key \"token\", written by gardenlet's token requestor)")

// connection reaches the store as the role, with the token of the entry secret exchanged at STS by the
// sidecar's own implementation (s3webidentity). A token that STS refuses (expired, another issuer's)
// fails the first request with STS's answer.
func (wi *workloadIdentityConfig) connection(ctx context.Context, req provider.EntryRequest) (connection, error) {
	if len(req.WorkloadIdentityToken) == 0 {
		return connection{}, errNoToken
	}
	if req.Region == "" {
		return connection{}, errors.New("no region: spec.region is empty")
	}
	// Loading reads the environment and shared configuration files only; no request is made here.
	sdk, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(req.Region))
	if err != nil {
		return connection{}, fmt.Errorf("loading the AWS SDK configuration: %w", err)
	}
	return connection{
		region:         req.Region,
		endpoint:       wi.Endpoint,
		forcePathStyle: wi.S3ForcePathStyle,
		identity:       s3webidentity.Credentials(sdk, wi.Endpoint, wi.RoleARN, s3webidentity.Token(req.WorkloadIdentityToken)),
	}, nil
}
