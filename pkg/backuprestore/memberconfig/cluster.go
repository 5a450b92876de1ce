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
// ConfigMap written by an earlier version of our druid. The members of an existing cluster this Etcd joins
// (ExistingCluster) are not among them.
func (t Template) InitialCluster() (InitialCluster, error) {
	own, _, err := t.splitInitialCluster()
	if err != nil {
		return nil, err
	}
	if prefix := t.MemberNamePrefix(); prefix != "" {
		for i := range own {
			own[i].Name = MemberName(prefix, own[i].Name)
		}
	}
	return own, nil
}

// ExistingCluster are the members of the existing (source) cluster the Etcd joins instead of
// bootstrapping one (spec.etcd.bootstrapWithExistingCluster), under the names the source cluster gives
// them: druid appends them to initial-cluster after the Etcd's own members. Empty for every other Etcd.
func (t Template) ExistingCluster() (InitialCluster, error) {
	_, existing, err := t.splitInitialCluster()
	return existing, err
}

// splitInitialCluster tells the Etcd's own entries of initial-cluster from those of an existing cluster it
// joins: druid renders its own members keyed by pod name, each with an entry in the URL maps, and the
// source members under their names, without one. A template of an earlier version of our druid names its
// own members `<prefix>-<pod>` and never names a source cluster: when no entry is a pod of the URL maps,
// every entry is the Etcd's own.
func (t Template) splitInitialCluster() (own, existing InitialCluster, err error) {
	ic, err := ParseInitialCluster(t.str(etcdpod.KeyInitialCluster))
	if err != nil {
		return nil, nil, err
	}
	pods, ok := t[etcdpod.KeyInitialAdvertisePeerURLs].(map[string]any)
	if !ok || !slices.ContainsFunc(ic, func(m ClusterMember) bool { _, pod := pods[m.Name]; return pod }) {
		return ic, nil, nil
	}
	for _, m := range ic {
		if _, pod := pods[m.Name]; pod {
			own = append(own, m)
		} else {
			existing = append(existing, m)
		}
	}
	return own, existing, nil
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
