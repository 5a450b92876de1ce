package sidecar

import (
	"context"
	"sync"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// servedConfig renders the member's configuration on each GET /config and remembers the last one it
// served: that is the configuration the running etcd was started with, and the peer URL switch must act on
// it rather than on a template that changed since (see package member).
type servedConfig struct {
	templatePath string
	pod          string

	mu     sync.Mutex
	join   []memberconfig.ClusterMember // set by the initializer when the member joins as a learner
	last   *memberconfig.Config
	notify chan struct{} // signalled after every successful serve
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

// setJoin records the members of the cluster the last initialization joined this member to (nil: the
// member starts from its own data or bootstraps).
func (s *servedConfig) setJoin(members []memberconfig.ClusterMember) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.join = members
}

// Serve implements httpapi.Options.Config.
func (s *servedConfig) Serve(context.Context) ([]byte, error) {
	cfg, err := s.resolve()
	if err != nil {
		return nil, err
	}
	out, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.last = cfg
	s.mu.Unlock()
	s.signal()
	return out, nil
}

// signal wakes the membership loop; signals coalesce.
func (s *servedConfig) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Last is the configuration served most recently, nil before the first.
func (s *servedConfig) Last() *memberconfig.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
