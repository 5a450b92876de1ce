package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// upstreamComponents are upstream's released components: the tools module that pins each, the module it
// requires, the binary `make tools-upstream` links into bin/ (a name that cannot be taken for ours) and its
// path in upstream's image.
var upstreamComponents = []struct{ name, moduleDir, module, binary, path string }{
	{"upstream-etcd-druid", "hack/tools/upstream-etcd-druid", "github.com/gardener/etcd-druid", "upstream-etcd-druid", "/etcd-druid"},
	{"upstream-etcd-backup-restore", "hack/tools/upstream-etcd-backup-restore", "github.com/gardener/etcd-backup-restore", "upstream-etcdbrctl", "/etcdbrctl"},
}

// Upstream are the images of upstream's released etcd-druid and etcd-backup-restore, for the tests that run
// upstream's components beside ours. Their binaries are the ones `make tools-upstream` built from upstream's
// modules with upstream's version stamp (in binDir), so they are for the host's platform only.
//
// Each image gives its binary what upstream's image gives it at run time (upstream's Dockerfiles:
// distroless static, tag nonroot): the binary at upstream's path (/etcd-druid, /etcdbrctl) as the
// entrypoint — druid's pods pass only arguments — user and group 65532, working directory /, CA
// certificates, /tmp and /home/nonroot (the root file system every image here has). Upstream's druid image
// also carries its Helm chart at /charts, which the binary never reads (its image vector is embedded), so
// it is left out. The images are tagged and labelled with upstream's version, read from the pin.
func Upstream(moduleDir, binDir string) ([]Binary, error) {
	var images []Binary
	for _, c := range upstreamComponents {
		version, err := PinnedVersion(filepath.Join(moduleDir, c.moduleDir), c.module)
		if err != nil {
			return nil, err
		}
		images = append(images, Binary{Name: c.name, Prebuilt: filepath.Join(binDir, c.binary), Path: c.path,
			WorkingDir: "/", Version: version, Source: "https://" + c.module})
	}
	return images, nil
}

// PinnedVersion is the version the tools module in dir requires of module.
func PinnedVersion(dir, module string) (string, error) {
	file := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(file, data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == module {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s requires no %s", file, module)
}
