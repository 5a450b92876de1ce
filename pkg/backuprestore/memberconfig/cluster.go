package memberconfig

import (
	"slices"
	"sort"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// The template keys that describe the whole cluster rather than one member.
const keyInitialClusterToken = "initial-cluster-token"

// InitialCluster is the template's initial-cluster under the etcd member names: every replica of the Etcd;
// its length is the cluster size the initializer and the scale-down cleanup work with. With a
// member-name-prefix (druid renders the entries by pod name) each entry `<pod>` becomes `<prefix>-<pod>`;
// without one the names are taken as they stand: the pod names, or the member names `<prefix>-<pod>` of a
// ConfigMap written by an earlier version of our druid.
func (t Template) InitialCluster() (InitialCluster, error) {
	ic, err := ParseInitialCluster(t.str(etcdpod.KeyInitialCluster))
	if err != nil {
		return nil, err
	}
	if prefix := t.MemberNamePrefix(); prefix != "" {
		for i := range ic {
			ic[i].Name = MemberName(prefix, ic[i].Name)
		}
	}
	return ic, nil
}

// MemberNamePrefix is the template's member-name-prefix (spec.memberNamePrefix), empty when unset.
func (t Template) MemberNamePrefix() string { return t.str(etcdpod.KeyMemberNamePrefix) }

// MemberName is the etcd member name of pod: `<prefix>-<pod>`, or the pod name without a prefix.
func MemberName(prefix, pod string) string {
	if prefix == "" {
		return pod
	}
	return prefix + "-" + pod
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
