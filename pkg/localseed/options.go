package localseed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"golang.org/x/mod/modfile"
)

// BinDirEnv overrides where the control-plane and S3 binaries (built by `make tools`) are looked up.
const BinDirEnv = "GARDENER_ETCD_BIN_DIR"

// Options configure a local seed. The zero value is a 3-node seed in a fresh temp directory.
type Options struct {
	// Nodes is the number of nodes (default 3, at most 26), named <prefix>-node-a, -b, ... in zones a, b, ...
	// Each is a real Kubernetes node: a kubelet, containerd, runc, CNI and kube-proxy in its own network
	// namespace, pulling from the seed's registry (Registry), with CoreDNS for the cluster.
	Nodes int
	// StateDir holds everything of the instance (PKI, etcd data, logs, pods, volumes). It must not exist
	// or be empty: Stop removes it. Default: a new directory under os.TempDir().
	StateDir string
	// S3 starts versitygw on the pod bridge, reachable from host and pods.
	S3 bool
	// NetworkPolicies enforces NetworkPolicies: every node runs kube-network-policies (`make tools`) in its
	// network namespace. Off by default: without it the nodes let all pod traffic through, as before, and
	// druid's and Gardener's policies are objects nothing acts on.
	NetworkPolicies bool
	// BinDir holds the control plane's binaries, NodeTools, versitygw and, for NetworkPolicies,
	// kubeletnode.NetworkPolicyAgent (`make tools`); default
	// $GARDENER_ETCD_BIN_DIR, else the bin/ directory above the working directory or the executable.
	BinDir string
	// Log receives the seed's structured logs (default: discard).
	Log logr.Logger
	// SourceDir is the project's source tree, which the seed builds its own images from (the sandbox image);
	// default: the module root above the working directory, else the parent of BinDir.
	SourceDir string
}

func (o *Options) defaults() error {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Nodes < 0 || o.Nodes > maxNodes {
		return fmt.Errorf("nodes must be between 1 and %d, got %d", maxNodes, o.Nodes)
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if o.BinDir == "" {
		dir, err := findBinDir()
		if err != nil {
			return err
		}
		o.BinDir = dir
	}
	if o.SourceDir == "" {
		o.SourceDir = findSourceDir(filepath.Dir(o.BinDir))
	}
	return nil
}

// DefaultBinDir is where Options.BinDir defaults to: $GARDENER_ETCD_BIN_DIR, else the first bin/ with a
// kube-apiserver above the working directory or the executable.
func DefaultBinDir() (string, error) { return findBinDir() }

func findBinDir() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			if _, err := os.Stat(filepath.Join(dir, "bin", "kube-apiserver")); err == nil {
				return filepath.Join(dir, "bin"), nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("bin/kube-apiserver not found above the working directory or the executable: run `make tools` or set " + BinDirEnv)
}

// modulePath is the project's module.
const modulePath = "github.com/gardener-etcd/gardener-etcd"

// findSourceDir is the nearest directory at or above the working directory whose go.mod is the project's,
// else fallback.
func findSourceDir(fallback string) string {
	dir, err := os.Getwd()
	if err != nil {
		return fallback
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(data) == modulePath {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fallback
		}
		dir = parent
	}
}
