// Package memberconfig turns the etcd configuration template that druid writes into the ConfigMap
// (pkg/etcdpod.ConfigTemplate, rendered by pkg/druid/component/configmap) into the concrete configuration of one member, the YAML the sidecar
// serves on GET /config and the etcd wrapper feeds to embed.ConfigFromFile.
//
// The template is shared by all members of an Etcd, so some of its keys cannot be used as they are: `name`
// is a placeholder, and `initial-advertise-peer-urls` / `advertise-client-urls` are maps from pod name to
// URLs. The member resolves its own entries by POD_NAME; all URLs of its entry are advertised (the peer
// Service URL and the Etcd's additionalAdvertisePeerURLs).
//
// Member names: druid (ours, and the upstream one) keys `initial-cluster` by pod name, one `<pod>=<url>`
// entry per peer URL, and writes spec.memberNamePrefix as `member-name-prefix`. The etcd member of pod p is
// then `<prefix>-<p>` (its member lease too), so the served configuration carries that `name` and an
// `initial-cluster` whose entries are renamed the same way: etcd checks at bootstrap that its own name and
// advertised peer URLs are listed there. `member-name-prefix` itself is not passed on (etcd has no such
// option, and the served configuration is already resolved). A template without `member-name-prefix`
// names the members as its initial-cluster does: the pod names, or `<prefix>-<pod>` in a ConfigMap written
// by an earlier version of our druid, which put the member names into initial-cluster; a running member
// keeps its name across a rolling update of druid either way.
//
// A member that joins a running cluster as a learner must not bootstrap a cluster of its own: it starts
// with `initial-cluster-state: existing` and an `initial-cluster` listing the members etcd knows now plus
// itself (etcd checks that list against the membership), not the template's list of every replica.
//
// The template is read as a generic map so that keys this package does not know (new etcd options, TLS
// blocks) reach etcd unchanged.
package memberconfig
