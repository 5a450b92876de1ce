package imagebuild

import (
	"fmt"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// HostPlatform is the Linux platform of the machine's architecture: the only one a local seed on this
// machine runs, so building just it halves the work of a demo or a test seed.
func HostPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// ParsePlatforms reads a comma-separated list such as "linux/amd64,linux/arm64" (the form of docker's
// --platform). The empty string means DefaultPlatforms, "host" HostPlatform.
func ParsePlatforms(list string) ([]v1.Platform, error) {
	if strings.TrimSpace(list) == "" {
		return DefaultPlatforms, nil
	}
	var platforms []v1.Platform
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "host" {
			platforms = append(platforms, HostPlatform())
			continue
		}
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", s, err)
		}
		if p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q: want <os>/<arch>[/<variant>], e.g. linux/arm64", s)
		}
		platforms = append(platforms, *p)
	}
	return platforms, nil
}
