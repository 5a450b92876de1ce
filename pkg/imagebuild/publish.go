package imagebuild

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// RefAnnotation names an image index in an OCI layout by its tag (the OCI image layout's own annotation).
const RefAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces the OCI image layout at dir with the index, tagged as tag, so that `make push` and
// the local seed take exactly what `make images` built.
func WriteLayout(dir string, index v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	path, err := layout.Write(dir, emptyOCIIndex())
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return path.AppendIndex(index, layout.WithAnnotations(map[string]string{RefAnnotation: tag}))
}

// ReadLayout returns the one index WriteLayout stored at dir, with its tag.
func ReadLayout(dir string) (v1.ImageIndex, string, error) {
	path, err := layout.FromPath(dir)
	if err != nil {
		return nil, "", fmt.Errorf("OCI layout %s (run make images): %w", dir, err)
	}
	top, err := path.ImageIndex()
	if err != nil {
		return nil, "", err
	}
	manifest, err := top.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(manifest.Manifests) != 1 {
		return nil, "", fmt.Errorf("OCI layout %s holds %d images, want 1", dir, len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	index, err := top.ImageIndex(desc.Digest)
	if err != nil {
		return nil, "", err
	}
	return index, desc.Annotations[RefAnnotation], nil
}

// Push writes the index to the registry as ref (a tag) and returns the reference by digest, which is
// what nodes should pull. insecure allows plain HTTP, for a registry on the local seed.
func Push(ctx context.Context, index v1.ImageIndex, ref string, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return name.Digest{}, err
	}
	if err := remote.WriteIndex(tag, index, remote.WithContext(ctx)); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", tag, err)
	}
	digest, err := index.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return tag.Context().Digest(digest.String()), nil
}
