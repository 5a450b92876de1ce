package upstream

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// upstreamBinary finds the binary of an upstream image (imagebuild.Upstream) as `make tools-upstream`
// linked it; a clone where that never ran skips the test.
func upstreamBinary(t *testing.T, img imagebuild.Binary, env string) string {
	t.Helper()
	bin, err := childproc.FindBinary(filepath.Base(img.Prebuilt), env)
	if errors.Is(err, childproc.ErrNoBinary) {
		t.Skipf("%v (upstream's components are built by `make tools-upstream`, not by `make tools`)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Each upstream binary runs and reports the version its tools module pins, stamped as upstream's own
// build stamps it (a plain `go build` would report etcd-druid's "v0.0.0-master+$Format:%H$" and an empty
// etcd-backup-restore version).
func TestUpstreamBinariesReportThePinnedVersion(t *testing.T) {
	images, err := imagebuild.Upstream("../..", "")
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]struct {
		env  string
		want func(version string) *regexp.Regexp
	}{
		// internal/version: "<programName> <gitVersion>" on stdout.
		"upstream-etcd-druid": {"UPSTREAM_ETCD_DRUID_BIN", func(v string) *regexp.Regexp {
			return regexp.MustCompile(`(?m)^etcd-druid ` + regexp.QuoteMeta(v) + `$`)
		}},
		// cmd/miscellaneous.go: logged lines "etcd-backup-restore Version: <v>" and "Git SHA: <short commit>".
		"upstream-etcd-backup-restore": {"UPSTREAM_ETCDBRCTL_BIN", func(v string) *regexp.Regexp {
			return regexp.MustCompile(`etcd-backup-restore Version: ` + regexp.QuoteMeta(v) + `(?s:.*)Git SHA: [0-9a-f]{7}`)
		}},
	}
	if len(images) != len(checks) {
		t.Fatalf("%d upstream images, the test knows %d", len(images), len(checks))
	}
	for _, img := range images {
		t.Run(img.Name, func(t *testing.T) {
			check, ok := checks[img.Name]
			if !ok {
				t.Fatalf("no version check for %s", img.Name)
			}
			bin := upstreamBinary(t, img, check.env)
			out, err := exec.Command(bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", bin, err, out)
			}
			if want := check.want(img.Version); !want.Match(out) {
				t.Fatalf("%s --version printed\n%s\nwant a match of %s", bin, out, want)
			}
			t.Logf("%s --version:\n%s", bin, out)
		})
	}
}
