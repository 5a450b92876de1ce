// Package version reports the build's version, stamped by `make build` through -ldflags, so that every
// binary and every log line can say which code runs.
package version

import "runtime/debug"

// Version is set with -ldflags "-X github.com/gardener-etcd/gardener-etcd/pkg/version.Version=…".
var Version = ""

// Get returns the stamped version, else the module version or VCS revision Go recorded, else "dev".
func Get() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" && info.Main.Version != "(devel)" {
			return info.Main.Version
		}
		for _, setting := range info.Settings {
			if setting.Key == "vcs.revision" {
				return setting.Value
			}
		}
	}
	return "dev"
}
