// Package etcddata reads an etcd data directory without starting etcd on it: what its WAL and bbolt
// database hold (member and cluster ID, revision, consistent index, the membership's size and peer URLs),
// and which etcd versions wrote it and may open it. The sidecar's initializer decides on these facts; the
// etcd wrapper checks, before it starts its etcd, that this etcd can open the directory, and otherwise
// which older etcds must run on it first, and asks the members the data knows for their versions. A
// package of its own so that the wrapper does not link the sidecar.
package etcddata
