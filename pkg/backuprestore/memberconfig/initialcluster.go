package memberconfig

import (
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/types"
)

// ClusterMember is a member as the running cluster knows it (MemberList): its name is empty until the
// member has started once, which is how a freshly added learner shows up.
type ClusterMember struct {
	Name     string
	PeerURLs []string
}

// InitialCluster is etcd's `initial-cluster` as an ordered list of name → peer URLs.
type InitialCluster []ClusterMember

// ParseInitialCluster parses `name=url,name=url2,...`; repeated names collect several URLs of one member.
func ParseInitialCluster(s string) (InitialCluster, error) {
	var ic InitialCluster
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, url, ok := strings.Cut(entry, "=")
		if !ok || name == "" || url == "" {
			return nil, fmt.Errorf("initial-cluster entry %q is not <name>=<peer URL>", entry)
		}
		if i := slices.IndexFunc(ic, func(m ClusterMember) bool { return m.Name == name }); i >= 0 {
			ic[i].PeerURLs = append(ic[i].PeerURLs, url)
			continue
		}
		ic = append(ic, ClusterMember{Name: name, PeerURLs: []string{url}})
	}
	return ic, nil
}

// String renders the list in etcd's syntax.
func (ic InitialCluster) String() string {
	var entries []string
	for _, m := range ic {
		for _, u := range m.PeerURLs {
			entries = append(entries, m.Name+"="+u)
		}
	}
	return strings.Join(entries, ",")
}

// memberNameFor finds the member of pod in the template's initial-cluster (names already mapped by
// Template.InitialCluster). With a member-name-prefix the name is known, `<prefix>-<pod>`, and must be listed.
// Without one (a template of an earlier version of our druid wrote `<prefix>-<pod>` into initial-cluster and
// no member-name-prefix) it is the entry named after the pod or ending in `-<pod>`; when several entries
// qualify, the one advertising the pod's own peer URLs wins, so a prefix that itself ends in a pod-like
// name cannot confuse two members.
func (ic InitialCluster) memberNameFor(prefix, pod string, peerURLs []string) (string, error) {
	if prefix != "" {
		name := MemberName(prefix, pod)
		if !slices.ContainsFunc(ic, func(m ClusterMember) bool { return m.Name == name }) {
			return "", fmt.Errorf("initial-cluster %q has no member for pod %q (member-name-prefix %q)", ic.String(), pod, prefix)
		}
		return name, nil
	}
	var candidates []ClusterMember
	for _, m := range ic {
		if m.Name == pod || strings.HasSuffix(m.Name, "-"+pod) {
			candidates = append(candidates, m)
		}
	}
	switch len(candidates) {
	case 0:
		return "", fmt.Errorf("initial-cluster %q has no member for pod %q", ic.String(), pod)
	case 1:
		return candidates[0].Name, nil
	}
	for _, m := range candidates {
		if sameURLs(m.PeerURLs, peerURLs) {
			return m.Name, nil
		}
	}
	return "", fmt.Errorf("initial-cluster has several members for pod %q and none advertises %v", pod, peerURLs)
}

// JoinCluster is the initial-cluster a member joining a running cluster starts with: every member the
// cluster knows under a name, plus self with its own peer URLs. Unnamed members (learners added but not
// started yet, including self) cannot be listed: etcd matches initial-cluster entries by name.
func JoinCluster(current []ClusterMember, self string, selfPeerURLs []string) InitialCluster {
	var ic InitialCluster
	for _, m := range current {
		if m.Name == "" || m.Name == self {
			continue
		}
		ic = append(ic, ClusterMember{Name: m.Name, PeerURLs: slices.Clone(m.PeerURLs)})
	}
	return append(ic, ClusterMember{Name: self, PeerURLs: slices.Clone(selfPeerURLs)})
}

// sameURLs compares URL lists as sets (etcd keeps them sorted, the template in its own order).
func sameURLs(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// SameURLs tells whether two URL lists name the same URLs in any order.
func SameURLs(a, b []string) bool { return sameURLs(a, b) }

// validURLs checks URLs the way etcd will parse them: embed.ConfigFromFile exits the process on a bad
// URL, so a bad template must be reported here, as an error the wrapper can show.
func validURLs(key string, urls []string) error {
	if len(urls) == 0 {
		return fmt.Errorf("%s is empty", key)
	}
	if _, err := types.NewURLs(urls); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
