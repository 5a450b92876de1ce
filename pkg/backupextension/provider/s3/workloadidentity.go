package s3

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// DataKeyWorkloadIdentityConfig is where a workload-identity entry secret carries the provider's
// configuration: for AWS a WorkloadIdentityConfig naming the role to assume.
const DataKeyWorkloadIdentityConfig = "config"

// workloadIdentityConfig is the part of AWS's WorkloadIdentityConfig the sidecar needs.
type workloadIdentityConfig struct {
	RoleARN string `json:"roleARN"`
}

// roleARNFrom reads the role of a workload-identity configuration. The sidecar assumes it with the token
// gardenlet's token requestor writes next to it (STS AssumeRoleWithWebIdentity), so a configuration
// without a role leaves the etcd without credentials and is refused naming the key.
func roleARNFrom(config []byte) ([]byte, error) {
	var wi workloadIdentityConfig
	if err := yaml.Unmarshal(config, &wi); err != nil {
		return nil, fmt.Errorf("reading the workload identity configuration (secret key %q): %w", DataKeyWorkloadIdentityConfig, err)
	}
	if wi.RoleARN == "" {
		return nil, fmt.Errorf("the workload identity configuration (secret key %q) names no %s", DataKeyWorkloadIdentityConfig, backupsecret.KeyRoleARN)
	}
	return []byte(wi.RoleARN), nil
}
