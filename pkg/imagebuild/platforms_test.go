package imagebuild

import (
	"runtime"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestParsePlatforms(t *testing.T) {
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	for _, tc := range []struct {
		in   string
		want []v1.Platform
	}{
		{"", DefaultPlatforms},
		{"linux/amd64", []v1.Platform{amd64}},
		{"linux/amd64, linux/arm64", []v1.Platform{amd64, arm64}},
		{"host", []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}},
		{"linux/arm/v7", []v1.Platform{{OS: "linux", Architecture: "arm", Variant: "v7"}}},
	} {
		got, err := ParsePlatforms(tc.in)
		if err != nil {
			t.Errorf("ParsePlatforms(%q): %v", tc.in, err)
			continue
		}
		if !slices.EqualFunc(got, tc.want, func(a, b v1.Platform) bool { return a.Equals(b) }) {
			t.Errorf("ParsePlatforms(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"amd64", "linux/", "linux/amd64,"} {
		if _, err := ParsePlatforms(bad); err == nil {
			t.Errorf("ParsePlatforms(%q): no error", bad)
		}
	}
}
