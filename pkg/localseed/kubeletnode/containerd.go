package kubeletnode

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// containerdConfig is the node's containerd configuration (format version 4, containerd 2.3 and later): its
// own root, state, sockets (the shims' too, in SocketDir) and opt directory, NRI off (its socket is host-wide); the CRI
// runtime with runc from BinDir; CNI from BinDir with the node's own configuration directory; network
// namespaces under the state directory (so that a teardown finds them); the seed's registry over plain HTTP
// through a hosts directory.
func (c Config) containerdConfig() map[string]any {
	return map[string]any{
		"version": 4,
		"root":    c.path("containerd", "root"),
		"state":   c.path("containerd", "state"),
		"plugins": map[string]any{
			"io.containerd.server.v1.grpc":  map[string]any{"address": c.containerdSocket()},
			"io.containerd.server.v1.ttrpc": map[string]any{"address": c.containerdSocket() + ".ttrpc"},
			"io.containerd.shim.v1.manager": map[string]any{"socket_dir": c.shimSocketDir()},
			"io.containerd.internal.v1.opt": map[string]any{"path": c.path("containerd", "opt")},
			"io.containerd.nri.v1.nri":      map[string]any{"disable": true},
			"io.containerd.cri.v1.runtime": map[string]any{
				// The sandbox lacks CAP_SYS_RESOURCE: the pause container's default -998 would fail in runc.
				"restrict_oom_score_adj":       true,
				"netns_mounts_under_state_dir": true,
				"containerd": map[string]any{
					"default_runtime_name": "runc",
					"runtimes": map[string]any{"runc": map[string]any{
						"runtime_type": "io.containerd.runc.v2",
						"options": map[string]any{
							"BinaryName": filepath.Join(c.BinDir, "runc"), "SystemdCgroup": false,
							// runc keeps container state here rather than in the host-wide /run/containerd/runc.
							"Root": c.path("runc"),
						},
					}},
				},
				"cni": map[string]any{
					"bin_dirs": []string{c.BinDir},
					"conf_dir": c.path("cni", "net.d"),
				},
			},
			"io.containerd.cri.v1.images": map[string]any{
				"snapshotter":   "overlayfs",
				"pinned_images": map[string]any{"sandbox": c.PauseImage},
				"registry":      map[string]any{"config_path": c.path("containerd", "certs.d")},
			},
			"io.containerd.grpc.v1.cri": map[string]any{
				"stream_server_address": "127.0.0.1",
			},
		},
	}
}

// registryHosts is the hosts.toml that lets containerd pull from the seed's registry over plain HTTP.
func (c Config) registryHosts() string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+c.Registry, "http://"+c.Registry)
}

// cniConfig is the node's pod network: a bridge (cni0) with the node's pod range, host-local addresses kept
// under the node's state, no masquerading (every pod range is routed), hairpin for Services that lead
// back to the calling pod, and portmap for hostPorts.
func (c Config) cniConfig() map[string]any {
	return map[string]any{
		"cniVersion": "1.0.0",
		"name":       "localseed",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": c.PodCIDR.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": c.path("cni", "ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
}

// writeContainerdFiles writes the containerd configuration, the registry hosts file and the CNI
// configuration.
func (c Config) writeContainerdFiles() (configPath string, err error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(c.containerdConfig()); err != nil {
		return "", fmt.Errorf("encoding containerd config: %w", err)
	}
	configPath = c.path("containerd", "config.toml")
	files := map[string][]byte{
		configPath: buf.Bytes(),
		c.path("containerd", "certs.d", c.Registry, "hosts.toml"): []byte(c.registryHosts()),
	}
	cni, err := jsonOf(c.cniConfig())
	if err != nil {
		return "", err
	}
	files[c.path("cni", "net.d", "10-localseed.conflist")] = cni
	return configPath, writeFiles(files)
}
