// Package etcdpod is the contract of the etcd pod, spelled once: what druid's StatefulSet and ConfigMap put
// into the pod (container names, ports, environment variables, mount paths, the configuration template's
// keys) and what the etcd wrapper and the backup-restore sidecar read from it. The Gardener side, which
// writes the ports into the Etcd and issues certificates for the pod's names, uses it too.
//
// It sits below druid, the sidecar and the wrapper and imports nothing of this project, so that the
// sidecar and the wrapper do not link druid's operators to learn a path. Every value here is on the wire
// of the upstream components (etcd-druid, etcd-backup-restore, etcd-wrapper): changing one
// breaks pods created by upstream druid.
package etcdpod
