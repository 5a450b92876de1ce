// Package member changes the local member's membership from its sidecar: it switches the member's peer
// URLs to the ones the configuration advertises (the sidecar's part of enabling peer TLS)
// and promotes a learner to a voting member once it has caught up.
//
// # Peer URL switch: one etcd restart instead of two pod restarts
//
// The seed restarts the pod twice: restart (1) mounts the peer certificates and brings the https
// configuration, after which the sidecar updates the member's peer URLs with MemberUpdate and flips the
// lease annotation; restart (2) makes etcd run with listeners that match the new membership. Here druid's
// rolling update is restart (1), and restart (2) is replaced by an in-place restart of etcd: after
// MemberUpdate the sidecar asks the wrapper to stop etcd (POST <wrapper port>/stop), the wrapper exits 0 and the
// kubelet restarts only the etcd container. No second rolling update, no rescheduling, no new pod IP.
//
// Why this is safe:
//   - MemberUpdate is a raft proposal: it returns once the cluster committed it, and etcd stores the member's
//     peer URLs in its membership (WAL and backend), not in flags. A restarted member with a data dir
//     ignores initial-advertise-peer-urls, so the restart can neither revert nor lose the update.
//   - etcd builds its peer listener from listen-peer-urls and peer-transport-security at start. The switch
//     compares against the configuration this sidecar served to the running etcd, so the restarted etcd
//     gets the same https listener and the certificates that configuration names, which the pod mounts
//     since restart (1). (Switching on a template that changed while the pod runs would restart etcd
//     with certificate paths the pod may not mount yet; the caller must not do that.)
//   - With an https config, the running etcd already listens with TLS before the update; the in-place
//     restart then only guarantees that listeners and membership agree from the start of the process. It
//     costs a few seconds once per member lifetime. For a single member there is no peer to lose contact
//     with in between; in a multi-member cluster only this member restarts, which quorum tolerates.
//   - The switch is idempotent: once the cluster's URLs equal the configured ones it does nothing, so a
//     sidecar restart in the middle repeats at most the update, never a restart loop.
//
// The member lease annotation `member.etcd.gardener.cloud/tls-enabled` is not written here: the heartbeat
// reports what the cluster says about the member, so it turns "true" exactly when the update is committed.
package member
