// Package builtin assembles the providers this extension ships, so both controllers and the binary agree on
// which provider types exist.
package builtin

import (
	"maps"
	"slices"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/local"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
)

// Providers returns the local and s3 providers; localRoot is the default directory of local buckets.
func Providers(localRoot string) provider.Registry {
	return provider.Registry{
		local.Type: local.New(localRoot),
		s3.Type:    s3.New(),
	}
}

// Types are the built-in provider types, sorted.
func Types() []string {
	return slices.Sorted(maps.Keys(Providers("")))
}

// Enabled returns the built-in providers of the given types only; unknown types are ignored (callers
// validate them against Types).
func Enabled(localRoot string, types []string) provider.Registry {
	enabled := provider.Registry{}
	for t, p := range Providers(localRoot) {
		if slices.Contains(types, t) {
			enabled[t] = p
		}
	}
	return enabled
}
