package memberconfig

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"

	"sigs.k8s.io/yaml"
)

// Member is this member's identity resolved from the template.
type Member struct {
	// Name is the etcd member name, which is also the name of its member lease.
	Name string
	// PeerURLs and ClientURLs are what the member advertises.
	PeerURLs   []string
	ClientURLs []string
}

// Config is one member's concrete etcd configuration.
type Config struct {
	Member Member
	// Joining is set when the member joins a running cluster (initial-cluster-state existing).
	Joining bool
	values  map[string]any
}

// Resolve builds the configuration of the member running in pod: its etcd name (`<prefix>-<pod>` with a
// member-name-prefix), its own advertised URLs (every URL of its entry: the peer Service URL and any
// additional peer URLs), and initial-cluster under the member names. joinMembers, when not nil, are the
// members of the running cluster this member joins as a learner (it must already have been added):
// initial-cluster becomes those members plus self and the state `existing`. Otherwise the template's
// initial-cluster (Template.InitialCluster, followed by the members of an existing cluster it joins,
// Template.ExistingCluster) and state `new` apply: etcd ignores both when the data dir
// already holds a member.
func Resolve(t Template, pod string, joinMembers []ClusterMember) (*Config, error) {
	if pod == "" {
		return nil, fmt.Errorf("no pod name: POD_NAME must be set")
	}
	peerURLs, err := t.urlsOf(etcdpod.KeyInitialAdvertisePeerURLs, pod)
	if err != nil {
		return nil, err
	}
	clientURLs, err := t.urlsOf(etcdpod.KeyAdvertiseClientURLs, pod)
	if err != nil {
		return nil, err
	}
	for key, urls := range map[string][]string{etcdpod.KeyInitialAdvertisePeerURLs: peerURLs, etcdpod.KeyAdvertiseClientURLs: clientURLs} {
		if err := validURLs(key, urls); err != nil {
			return nil, err
		}
	}
	for _, key := range []string{etcdpod.KeyListenPeerURLs, etcdpod.KeyListenClientURLs} {
		if err := validURLs(key, splitURLs(t.str(key))); err != nil {
			return nil, err
		}
	}
	templateCluster, err := t.InitialCluster()
	if err != nil {
		return nil, err
	}
	name, err := templateCluster.memberNameFor(t.MemberNamePrefix(), pod, peerURLs)
	if err != nil {
		return nil, err
	}

	cfg := &Config{Member: Member{Name: name, PeerURLs: peerURLs, ClientURLs: clientURLs}, values: maps.Clone(t)}
	cfg.values[etcdpod.KeyName] = name
	delete(cfg.values, etcdpod.KeyMemberNamePrefix) // applied above; not an option of etcd
	cfg.values[etcdpod.KeyInitialAdvertisePeerURLs] = strings.Join(peerURLs, ",")
	cfg.values[etcdpod.KeyAdvertiseClientURLs] = strings.Join(clientURLs, ",")
	if joinMembers != nil {
		cfg.Joining = true
		cfg.values[etcdpod.KeyInitialCluster] = JoinCluster(joinMembers, name, peerURLs).String()
		cfg.values[etcdpod.KeyInitialClusterState] = ClusterStateExisting
	} else {
		existing, err := t.ExistingCluster()
		if err != nil {
			return nil, err
		}
		cfg.values[etcdpod.KeyInitialCluster] = append(templateCluster, existing...).String()
		cfg.values[etcdpod.KeyInitialClusterState] = ClusterStateNew
	}
	return cfg, nil
}

// YAML renders the configuration for embed.ConfigFromFile; keys are sorted, so equal configurations render
// identically.
func (c *Config) YAML() ([]byte, error) {
	out, err := yaml.Marshal(c.values)
	if err != nil {
		return nil, fmt.Errorf("rendering the etcd configuration of %s: %w", c.Member.Name, err)
	}
	return out, nil
}

// DataDir is etcd's data directory.
func (c *Config) DataDir() string { return Template(c.values).DataDir() }

// InitialCluster is the rendered initial-cluster.
func (c *Config) InitialCluster() string { return Template(c.values).str(etcdpod.KeyInitialCluster) }

// ClusterState is the rendered initial-cluster-state.
func (c *Config) ClusterState() string { return Template(c.values).str(etcdpod.KeyInitialClusterState) }

// ListenPeerURLs are the URLs etcd's peer listeners bind (listen-peer-urls).
func (c *Config) ListenPeerURLs() []string {
	return splitURLs(Template(c.values).str(etcdpod.KeyListenPeerURLs))
}

// PeerTLS tells whether the member advertises https peer URLs only, i.e. whether peer TLS is configured
// for it (the state the member lease annotation reports once the cluster agrees).
func (c *Config) PeerTLS() bool { return AllHTTPS(c.Member.PeerURLs) }

// AllHTTPS tells whether urls is non-empty and every URL is https.
func AllHTTPS(urls []string) bool {
	for _, u := range urls {
		if !strings.HasPrefix(u, "https://") {
			return false
		}
	}
	return len(urls) > 0
}
