// Package s3webidentity assumes an S3 store's IAM role with a workload-identity token (STS
// AssumeRoleWithWebIdentity), as upstream etcd-backup-restore and Gardener's AWS extension do. It is the one
// implementation of the exchange: the backup-restore sidecar's S3 store presents the token file of its
// mounted secret, the backup extension's s3 provider the token gardenlet's token requestor writes into a
// BackupEntry's entry secret.
package s3webidentity

import (
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Credentials are the credentials of roleARN, assumed with token at STS and cached until they expire: the
// cache exchanges again then, asking token anew, so a token rotated meanwhile is used without a restart. sdk
// is the AWS SDK configuration the STS client is built from (region, HTTP client, AWS_ENDPOINT_URL_STS).
// STS is reached where AWS_ENDPOINT_URL_STS says when it is set; otherwise at storeEndpoint when that is a
// server other than AWS (STSEndpointOf), else at AWS's regional STS.
func Credentials(sdk aws.Config, storeEndpoint, roleARN string, token stscreds.IdentityTokenRetriever) aws.CredentialsProvider {
	var stsOpts []func(*sts.Options)
	if own := STSEndpointOf(storeEndpoint); own != "" && !stsVariableSet() {
		stsOpts = append(stsOpts, func(o *sts.Options) { o.BaseEndpoint = aws.String(own) })
	}
	role := stscreds.NewWebIdentityRoleProvider(sts.NewFromConfig(sdk, stsOpts...), roleARN, token)
	return aws.NewCredentialsCache(role)
}

// Token is a token held in memory (an entry secret's), for Credentials.
type Token []byte

// GetIdentityToken returns the token.
func (t Token) GetIdentityToken() ([]byte, error) { return t, nil }

// STSEndpointOf is where a workload identity is exchanged when the SDK's configuration names no STS: the
// store's endpoint when it is a server other than AWS (MinIO, Ceph RGW serve STS at their S3 endpoint;
// in a pod nothing sets AWS_ENDPOINT_URL_STS), empty (AWS's regional STS) for AWS's own S3 endpoints,
// which serve no STS.
func STSEndpointOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	for _, domain := range []string{"amazonaws.com", "amazonaws.com.cn", "api.aws"} {
		if host == domain || strings.HasSuffix(host, "."+domain) {
			return ""
		}
	}
	return endpoint
}

// stsVariableSet tells whether the environment names an STS endpoint (AWS_ENDPOINT_URL_STS), which the
// SDK then uses and which wins over the store's endpoint.
func stsVariableSet() bool { return os.Getenv("AWS_ENDPOINT_URL_STS") != "" }
