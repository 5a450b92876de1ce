package localseed

import (
	"os"
	"path/filepath"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
)

// imageRegistry is where the charts and druid's defaults take the project's images from.
const imageRegistry = "ghcr.io/gardener-etcd/"

// ProjectImages maps the project's images to the binaries in binDir, under every name the charts and
// users are likely to write (with and without registry; untagged, tagged "latest" or with the charts'
// appVersion, their default tag), since the nodes match images exactly. Binaries that do not exist (yet)
// are returned in missing and not mapped, so that pods using them report ErrImagePull instead of failing
// at exec.
func ProjectImages(binDir string) (images map[string]string, missing []string) {
	images = map[string]string{}
	tags := []string{"", ":latest"}
	if version, err := charts.AppVersion(charts.EtcdDruid); err == nil {
		tags = append(tags, ":"+version)
	}
	for _, bin := range imagebuild.Project { // `make build` puts a binary of the image's name into bin/
		name := bin.Name
		bin := filepath.Join(binDir, name)
		if _, err := os.Stat(bin); err != nil {
			missing = append(missing, bin)
			continue
		}
		for _, tag := range tags {
			images[name+tag] = bin
			images[imageRegistry+name+tag] = bin
		}
	}
	return images, missing
}
