// Package builtin assembles the providers this extension ships, so both controllers and the binary agree on
// which provider types exist.
package builtin

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/backupprovider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupprovider/local"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupprovider/s3"
)

// Providers returns the local and s3 providers; localRoot is the default directory of local buckets.
func Providers(localRoot string) backupprovider.Registry {
	return backupprovider.Registry{
		local.Type: local.New(localRoot),
		s3.Type:    s3.New(),
	}
}
