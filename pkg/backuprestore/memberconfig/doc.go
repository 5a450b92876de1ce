// Package memberconfig turns the etcd configuration template that druid writes into the ConfigMap
// (pkg/etcdpod.ConfigTemplate, rendered by pkg/druid/component/configmap) into the concrete configuration of one member, the YAML the sidecar
// serves on GET /config and the etcd wrapper feeds to embed.ConfigFromFile.
//
// The template is shared by all members of an Etcd, so three of its keys cannot be used as they are: `name`
// is a placeholder, and `initial-advertise-peer-urls` / `advertise-client-urls` are maps from pod name to
// URLs. The member resolves its own entries by POD_NAME. Its etcd member name is taken from
// `initial-cluster`, because only there a memberNamePrefix is visible (`<prefix>-<pod>=<url>`).
//
// A member that joins a running cluster as a learner must not bootstrap a cluster of its own: it starts
// with `initial-cluster-state: existing` and an `initial-cluster` listing the members etcd knows now plus
// itself (etcd checks that list against the membership), not the template's list of every replica.
//
// The template is read as a generic map so that keys this package does not know (new etcd options, TLS
// blocks) reach etcd unchanged.
package memberconfig
