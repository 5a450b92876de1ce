package snapstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"gocloud.dev/blob/fileblob"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
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

func openLocal(cfg localConfig, prefix string, tr transfers, log logr.Logger) (SnapStore, error) {
	if err := checkLocalPrefix(prefix); err != nil {
		return nil, err
	}
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
	store := newBlobStore(bucket, string(ProviderLocal), cfg.dir, prefix, tr, log)
	store.listKeys = func(ctx context.Context, prefix string, add func(key string)) error {
		return listLocal(ctx, cfg.dir, prefix, add)
	}
	return store, nil
}

// checkLocalPrefix refuses a prefix whose keys fileblob would not store under their own path, since
// listLocal walks the plain path and would find nothing there.
func checkLocalPrefix(prefix string) error {
	if problem := druidv1alpha1.LocalPrefixProblem(prefix); problem != "" {
		return fmt.Errorf("local store prefix %q %s", prefix, problem)
	}
	return nil
}

// listLocal calls add with the key of every file below prefix in the store directory dir, by its
// name alone. fileblob's own listing reads a directory and then looks at each file in it, and fails
// the whole listing when one has gone in between: an upload's temporary file renamed into place, or a
// snapshot deleted by the garbage collection. A listing needs only names; it skips the temporary
// files of uploads under way (<key>.<random>.tmp, see NoTempDir).
func listLocal(ctx context.Context, dir, prefix string, add func(key string)) error {
	root := filepath.Join(dir, filepath.FromSlash(prefix))
	return filepath.WalkDir(root, func(file string, entry fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // nothing stored yet, or a directory removed during the walk
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case entry.IsDir() || strings.HasSuffix(entry.Name(), ".tmp"):
			return nil
		}
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return err
		}
		add(prefix + filepath.ToSlash(rel))
		return nil
	})
}
