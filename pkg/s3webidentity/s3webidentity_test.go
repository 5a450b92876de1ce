package s3webidentity_test

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/s3webidentity"
)

// Only a server other than AWS is asked for STS at the store's endpoint: an AWS S3 endpoint (regional,
// dual-stack, FIPS, a VPC endpoint) serves no STS, so the SDK's own resolution (AWS's regional STS, or
// AWS_ENDPOINT_URL_STS) stays.
func TestSTSEndpointOf(t *testing.T) {
	for endpoint, want := range map[string]string{
		"":                                   "",
		"http://10.0.0.1:9000":               "http://10.0.0.1:9000",
		"https://minio.example.org":          "https://minio.example.org",
		"https://s3.eu-west-1.amazonaws.com": "",
		"https://s3.dualstack.eu-west-1.amazonaws.com":                 "",
		"https://bucket.vpce-1a2b3c4d.s3.eu-west-1.vpce.amazonaws.com": "",
		"https://s3.cn-north-1.amazonaws.com.cn":                       "",
		"https://s3-fips.us-gov-west-1.amazonaws.com":                  "",
		"https://s3.eu-west-1.api.aws":                                 "",
		"https://amazonaws.com.example.org":                            "https://amazonaws.com.example.org",
	} {
		if got := s3webidentity.STSEndpointOf(endpoint); got != want {
			t.Errorf("STSEndpointOf(%q) = %q, want %q", endpoint, got, want)
		}
	}
}
