package localseed

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// registryPort is fixed: the registry binds the instance's own bridge address.
const registryPort = 5000

// registryComponent names the registry among the seed's components and its log file.
const registryComponent = "registry"

// startRegistry runs a container registry (distribution) on the bridge address over plain HTTP: `make
// images` output is pushed there and the nodes pull it by digest, as a real seed pulls from its registry.
// Deleting is off. Pushing needs no credentials (any pod could push), but what is pulled by digest cannot
// be replaced: a digest names its content.
func (s *Seed) startRegistry(ctx context.Context) error {
	bin := filepath.Join(s.opts.BinDir, "registry")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("registry not found in %s: run `make tools` first", s.opts.BinDir)
	}
	dir := filepath.Join(s.stateDir, "registry")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`, filepath.Join(dir, "data"), s.Registry())
	configPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return err
	}
	p, err := proc.Start(proc.Spec{Path: bin, Args: []string{"serve", configPath}, LogPath: s.cp.logPath(registryComponent)})
	if err != nil {
		return err
	}
	s.cp.components = append(s.cp.components, component{name: registryComponent, p: p})
	return waitReady(ctx, registryComponent, p, s.cp.logPath(registryComponent), httpReady("http://"+s.Registry()+"/v2/", nil))
}

// Registry is the seed's registry (host:port on the bridge), reachable from the host and every node.
func (s *Seed) Registry() string {
	return net.JoinHostPort(s.network.Gateway.String(), strconv.Itoa(registryPort))
}
