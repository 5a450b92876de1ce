package sidecar

import (
	"context"
	"sync"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// servedConfig holds the configuration the next etcd start gets. A successful initialization fixes it
// (prepare): the decision was taken for exactly that configuration, the wrapper fetches it with GET
// /config right after, and the membership loop (promotion, peer URL switch) acts on it once that etcd
// answers. GET /config itself changes nothing: before the first initialization of this sidecar process
// it renders the current template, after one it serves the prepared configuration.
type servedConfig struct {
	templatePath string
	pod          string

	mu       sync.Mutex
	join     []memberconfig.ClusterMember // set by the initializer when the member joins as a learner
	prepared *memberconfig.Config
	notify   chan struct{} // signalled after every successful initialization
}

func newServedConfig(templatePath, pod string) *servedConfig {
	return &servedConfig{templatePath: templatePath, pod: pod, notify: make(chan struct{}, 1)}
}

// resolve reads the current template and resolves this member, as a joining learner when the last
// initialization added it to a running cluster.
func (s *servedConfig) resolve() (*memberconfig.Config, error) {
	t, err := memberconfig.LoadTemplate(s.templatePath)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	join := s.join
	s.mu.Unlock()
	return memberconfig.Resolve(t, s.pod, join)
}

// reset forgets the outcome of the last initialization when a new one starts: a failed one must not
// leave an old join list or configuration behind.
func (s *servedConfig) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.join, s.prepared = nil, nil
}

// prepare fixes the configuration of the next etcd start after a successful initialization: the members
// of the cluster it joins (nil: the member starts from its own data or bootstraps) and the current
// template. It wakes the membership loop.
func (s *servedConfig) prepare(join []memberconfig.ClusterMember) error {
	s.mu.Lock()
	s.join = join
	s.mu.Unlock()
	cfg, err := s.resolve()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.prepared = cfg
	s.mu.Unlock()
	s.signal()
	return nil
}

// Serve implements httpapi.Options.Config; it has no side effects.
func (s *servedConfig) Serve(context.Context) ([]byte, error) {
	cfg := s.Last()
	if cfg == nil {
		var err error
		if cfg, err = s.resolve(); err != nil {
			return nil, err
		}
	}
	return cfg.YAML()
}

// signal wakes the membership loop; signals coalesce.
func (s *servedConfig) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Last is the configuration prepared by the last successful initialization, nil before the first.
func (s *servedConfig) Last() *memberconfig.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepared
}
