package memberconfig

import (
	"slices"
	"sort"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// The template keys that describe the whole cluster rather than one member.
const keyInitialClusterToken = "initial-cluster-token"

// InitialCluster is the template's initial-cluster: every replica of the Etcd; its length is the cluster
// size the initializer and the scale-down cleanup work with.
func (t Template) InitialCluster() (InitialCluster, error) {
	return ParseInitialCluster(t.str(etcdpod.KeyInitialCluster))
}

// ClusterToken is etcd's initial-cluster-token, which a restore must reuse so that the restored member
// belongs to the cluster the template describes.
func (t Template) ClusterToken() string { return t.str(keyInitialClusterToken) }

// AllClientURLs are the advertised client URLs of every pod in the template, sorted: where the
// initializer asks whether other members run before etcd of this member starts (the client service
// only reaches members that are ready, which a recovering cluster may not be).
func (t Template) AllClientURLs() []string {
	var out []string
	switch v := t[etcdpod.KeyAdvertiseClientURLs].(type) {
	case string:
		out = splitURLs(v)
	case map[string]any:
		pods := make([]string, 0, len(v))
		for pod := range v {
			pods = append(pods, pod)
		}
		sort.Strings(pods)
		for _, pod := range pods {
			if urls, err := stringList(v[pod], etcdpod.KeyAdvertiseClientURLs); err == nil {
				out = append(out, urls...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
