// Package member changes the local member's membership from its sidecar: it switches the member's peer
// URLs to the ones the configuration advertises (the sidecar's part of enabling peer TLS)
// and promotes a learner to a voting member once it has caught up.
//
// # Peer URL switch: no restart when etcd already listens with TLS
//
// A seed restarts the pod twice: restart (1) mounts the peer certificates and brings the https
// configuration, after which the sidecar updates the member's peer URLs with MemberUpdate and flips the
// lease annotation; restart (2) makes etcd run with listeners that match the new membership. Here druid's
// pod update is restart (1), and restart (2) is left out: etcd started by restart (1) already listens
// with TLS on the peer port, so the sidecar only calls MemberUpdate. Only when the running etcd's
// listen-peer-urls do not serve the new URLs (scheme and port, ListenersServe) does the sidecar restart
// etcd in place: it asks the wrapper to stop etcd (POST <wrapper port>/stop), the wrapper exits 0 and the
// kubelet restarts only the etcd container.
//
// Why this is safe:
//   - MemberUpdate is a raft proposal: it returns once the cluster committed it, and etcd stores the member's
//     peer URLs in its membership (WAL and backend), not in flags. A restarted member with a data dir
//     ignores initial-advertise-peer-urls, so no later start can revert or lose the update.
//   - etcd keeps a member's own peer URLs only for the others: applying the update, every other member
//     points its transport at the new URLs, the member itself changes nothing. Its listener and its peer
//     TLS (server and client side) come from the configuration it was started with, which is the one the
//     sidecar served and compares against, so a listener that serves the new URLs needs no restart. A
//     single member keeps taking writes throughout; new members join it over TLS.
//   - Before the update the others dial the member's old http URL and reach a TLS listener, so it is cut
//     off from them for the moment between its start and the update; a quorum of the others commits the
//     update, and that moment is the same with or without a restart.
//   - A restart, where one is needed, uses the configuration this sidecar served to the running etcd, so
//     the restarted etcd gets the same listener and the certificates that configuration names, which the
//     pod mounts since restart (1). (Switching on a template that changed while the pod runs would restart
//     etcd with certificate paths the pod may not mount yet; the caller must not do that.)
//   - The switch is idempotent: once the cluster's URLs equal the configured ones it does nothing, so a
//     sidecar restart in the middle repeats at most the update, never a restart loop.
//
// The member lease annotation `member.etcd.gardener.cloud/tls-enabled` is not written here: the member
// lease reports what the cluster says about the member, so it turns "true" only once the update is
// committed. The sidecar renews the lease right after a switch or a promotion, and the heartbeat at every
// beat.
package member
