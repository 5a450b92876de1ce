package snapstore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"gocloud.dev/blob/fileblob"
)

// localConfig is the resolved configuration of a directory store.
type localConfig struct {
	// dir is the container directory, <root>/<container>; objects are files below it.
	dir string
}

// localConfigFrom resolves $HOME/<container> (or <LocalRoot>/<container>). The secret's hostPath key
// names the directory on the node, which druid mounts at the home directory; the sidecar does not need it.
func localConfigFrom(cfg Config, secret secretDir) (localConfig, error) {
	container, err := containerFrom(cfg, secret, ProviderLocal, DefaultLocalContainer)
	if err != nil {
		return localConfig{}, err
	}
	if filepath.IsAbs(container) || container != filepath.Base(container) || container == ".." || container == "." {
		return localConfig{}, fmt.Errorf("local store container %q must be a single directory name", container)
	}
	root := cfg.LocalRoot
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return localConfig{}, fmt.Errorf("local store root: %w", err)
		}
		root = home
	}
	return localConfig{dir: filepath.Join(root, container)}, nil
}

func openLocal(cfg localConfig, prefix string, upload UploadOptions, log logr.Logger) (SnapStore, error) {
	bucket, err := fileblob.OpenBucket(cfg.dir, &fileblob.Options{
		CreateDir: true,
		// Temporary files next to the target keep the final rename on one file system; the object
		// appears atomically when the upload completes.
		NoTempDir: true,
		// Snapshot names carry all metadata; sidecar attribute files would only clutter the store.
		Metadata: fileblob.MetadataDontWrite,
	})
	if err != nil {
		return nil, fmt.Errorf("opening local store %s: %w", cfg.dir, err)
	}
	return newBlobStore(bucket, string(ProviderLocal), cfg.dir, prefix, upload, log), nil
}
