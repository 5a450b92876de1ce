package s3server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinaryEnv overrides where the versitygw binary is looked up, for runs outside the repository.
const BinaryEnv = "VERSITYGW_BIN"

// findBinary returns $VERSITYGW_BIN or the bin/versitygw of the nearest enclosing directory that has
// one (tests run in their package directory, somewhere below the repository root).
func findBinary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("locating versitygw: %w", err)
	}
	for {
		candidate := filepath.Join(dir, "bin", "versitygw")
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("bin/versitygw not found above the working directory; build it with hack/tools/install.sh or set " + BinaryEnv)
		}
		dir = parent
	}
}
