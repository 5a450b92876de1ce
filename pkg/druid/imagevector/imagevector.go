// Package imagevector gives druid its default container images the way upstream etcd-druid does: a
// built-in image vector (here: this project's registry at the version of this build, so that one release's
// druid, etcd-wrapper and etcdbrctl belong together), overridden entry by entry by the file that the
// environment variable IMAGEVECTOR_OVERWRITE names, in Gardener's image vector format. Gardenlet deploys
// druid with only that variable and an OperatorConfiguration (which has no image fields), so this is the
// one way such a deployment chooses the images of every Etcd.
package imagevector

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// OverrideEnv names the environment variable with the path of an image vector file (upstream druid's and
// Gardener's name).
const OverrideEnv = "IMAGEVECTOR_OVERWRITE"

// Names of the entries druid reads, as upstream etcd-druid names them in its image vector.
const (
	NameEtcdWrapper   = "etcd-wrapper"
	NameBackupRestore = "etcd-backup-restore"
)

// DefaultRegistry is the registry path this project publishes its images under (`make images`, the
// chart's image.repository). A build for another registry sets it with
// -ldflags "-X github.com/gardener-etcd/gardener-etcd/pkg/druid/imagevector.DefaultRegistry=…".
var DefaultRegistry = "ghcr.io/gardener-etcd"

// Repositories of the built-in entries below DefaultRegistry (pkg/imagebuild's image names).
const (
	repositoryEtcdWrapper   = "etcd-wrapper"
	repositoryBackupRestore = "etcdbrctl"
)

// Source is one entry of an image vector. Only the fields druid uses are read; the rest of Gardener's
// format (resourceId, sourceRepository, labels, …) is accepted and ignored.
type Source struct {
	Name string `json:"name"`
	// Ref is a full image reference; it wins over Repository and Tag.
	Ref *string `json:"ref,omitempty"`
	// Repository and Tag make the reference repository:tag, or repository@digest when Tag is a digest
	// (sha256:…); Tag may also be tag@digest.
	Repository *string `json:"repository,omitempty"`
	Tag        *string `json:"tag,omitempty"`
	// RuntimeVersion, TargetVersion and Architectures restrict an entry to some clusters; druid's images
	// have no such variants, so restricted entries are not used (Read refuses none of them).
	RuntimeVersion *string  `json:"runtimeVersion,omitempty"`
	TargetVersion  *string  `json:"targetVersion,omitempty"`
	Architectures  []string `json:"architectures,omitempty"`
}

// Vector is an image vector: later entries of the same name override earlier ones.
type Vector []Source

// BuiltIn is the built-in vector: this project's etcd-wrapper and etcdbrctl images tagged with the
// version of this build.
func BuiltIn() Vector {
	tag := version.Get()
	return Vector{
		{Name: NameEtcdWrapper, Repository: ptr(DefaultRegistry + "/" + repositoryEtcdWrapper), Tag: ptr(tag)},
		{Name: NameBackupRestore, Repository: ptr(DefaultRegistry + "/" + repositoryBackupRestore), Tag: ptr(tag)},
	}
}

// ReadFile reads an image vector file ({images: [...]}), naming the file and the entry that is wrong.
func ReadFile(path string) (Vector, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the image vector %s (%s): %w", path, OverrideEnv, err)
	}
	var file struct {
		Images Vector `json:"images"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("parsing the image vector %s (%s): %w", path, OverrideEnv, err)
	}
	for i, s := range file.Images {
		if s.Name == "" {
			return nil, fmt.Errorf("image vector %s: images[%d].name must be set", path, i)
		}
		if s.Ref == nil && s.Repository == nil && s.Tag == nil {
			return nil, fmt.Errorf("image vector %s: images[%d] (%s) needs ref, repository or tag", path, i, s.Name)
		}
		if s.Ref != nil && (s.Repository != nil || s.Tag != nil) {
			return nil, fmt.Errorf("image vector %s: images[%d] (%s) gives ref together with repository or tag", path, i, s.Name)
		}
	}
	return file.Images, nil
}

// Image is the reference of the entry name after every override (Gardener's merge: an override's
// repository without a tag keeps the tag before it, a ref replaces both), or "" when the vector has none.
func (v Vector) Image(name string) string {
	var ref, repository, tag *string
	for _, s := range v {
		if s.Name != name || s.RuntimeVersion != nil || s.TargetVersion != nil || len(s.Architectures) > 0 {
			continue
		}
		switch {
		case s.Ref != nil:
			ref, repository, tag = s.Ref, nil, nil
		default:
			// As in Gardener's merge, a tag alone keeps a ref before it; a repository replaces it.
			if s.Repository != nil {
				repository, ref = s.Repository, nil
			}
			if s.Tag != nil {
				tag = s.Tag
			}
		}
	}
	if ref != nil {
		return *ref
	}
	if repository == nil {
		return ""
	}
	if tag == nil || *tag == "" {
		return *repository
	}
	if len(*tag) > 7 && (*tag)[:7] == "sha256:" {
		return *repository + "@" + *tag
	}
	return *repository + ":" + *tag
}

// Load is the built-in vector with the file at overridePath (the value of OverrideEnv; "" for none)
// merged on top.
func Load(overridePath string) (Vector, error) {
	v := BuiltIn()
	if overridePath == "" {
		return v, nil
	}
	override, err := ReadFile(overridePath)
	if err != nil {
		return nil, err
	}
	return append(v, override...), nil
}

func ptr(s string) *string { return &s }
