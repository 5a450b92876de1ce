package webhook

// gardenerEtcds are Etcds in the shapes gardenlet writes (its etcd component, druid API v0.38.1): each
// must be admitted. Secret names are the secrets manager's (hashed); the values are Gardener's for the
// class (important for etcd-main, normal for etcd-events) and its botanist's schedules. The seed's provider
// extensions (provider-aws, provider-gcp, ...) add spec.storageClass on creation: "" (the seed's default
// class) for etcd-events, and for etcd-main when no class is configured.
var gardenerEtcds = map[string]string{
	"etcd-main, highly available": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
  labels: {gardener.cloud/role: controlplane, role: main}
  annotations: {gardener.cloud/operation: reconcile, gardener.cloud/timestamp: "2026-08-21T10:00:00.123456789Z"}
spec:
  replicas: 3
  priorityClassName: gardener-system-500
  selector:
    matchLabels: {gardener.cloud/role: controlplane, role: main, app: etcd-statefulset}
  labels:
    gardener.cloud/role: controlplane
    role: main
    app: etcd-statefulset
    networking.gardener.cloud/to-dns: allowed
    networking.gardener.cloud/to-public-networks: allowed
    networking.gardener.cloud/to-private-networks: allowed
    networking.gardener.cloud/to-runtime-apiserver: allowed
    networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379: allowed
    networking.resources.gardener.cloud/to-etcd-main-client-tcp-2380: allowed
    networking.resources.gardener.cloud/to-etcd-main-client-tcp-8080: allowed
  etcd:
    metrics: extensive
    defragmentationSchedule: "34 12 * * *"
    quota: 8Gi
    clientPort: 2379
    serverPort: 2380
    wrapperPort: 9095
    resources:
      requests: {cpu: 150m, memory: 500M}
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd-bundle-1a2b3c4d, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-main-5e6f7a8b}
      clientTLSSecretRef: {name: etcd-client-9c0d1e2f}
    peerUrlTls:
      tlsCASecretRef: {name: ca-etcd-peer-bundle-3a4b5c6d, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-peer-server-main-7e8f9a0b}
    clientService:
      annotations:
        networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports: '[{"port":2379,"protocol":"TCP"},{"port":8080,"protocol":"TCP"}]'
        networking.resources.gardener.cloud/namespace-selectors: '[{"matchLabels":{"kubernetes.io/metadata.name":"garden"}}]'
        networking.resources.gardener.cloud/pod-label-selector-namespace-alias: all-shoots
      trafficDistribution: PreferClose
  backup:
    port: 8080
    tls:
      tlsCASecretRef: {name: ca-etcd-bundle-1a2b3c4d, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-main-5e6f7a8b}
      clientTLSSecretRef: {name: etcd-client-9c0d1e2f}
    resources:
      requests: {cpu: 20m, memory: 80Mi}
    snapshotCompaction:
      resources:
        requests: {cpu: 600m, memory: 3Gi}
    compression: {enabled: true, policy: gzip}
    garbageCollectionPolicy: Exponential
    garbageCollectionPeriod: 12h
    store:
      secretRef: {name: etcd-backup}
      container: bucket-8d3c1f5e-2a4b-4c6d-8e0f-1a2b3c4d5e6f
      provider: aws
      prefix: shoot--dev--a--4f8a9b2c-1d3e-4f5a-6b7c-8d9e0f1a2b3c/etcd-main
    fullSnapshotSchedule: "12 2 * * *"
    deltaSnapshotPeriod: 5m
    deltaSnapshotMemoryLimit: 100Mi
    deltaSnapshotRetentionPeriod: 360h
    leaderElection: {reelectionPeriod: 5s, etcdConnectionTimeout: 5s}
  storageCapacity: 25Gi
  volumeClaimTemplate: main-etcd
  memberNamePrefix: aws-eu1
`,
	"etcd-main, single member, kept from eviction": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
spec:
  replicas: 1
  priorityClassName: gardener-system-500
  labels: {gardener.cloud/role: controlplane, role: main, app: etcd-statefulset}
  annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "false"}
  etcd:
    metrics: extensive
    defragmentationSchedule: "5 23 */3 * *"
    quota: 8Gi
    resources:
      requests: {cpu: 150m, memory: 500M}
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-main}
      clientTLSSecretRef: {name: etcd-client}
  backup:
    port: 8080
    resources:
      requests: {cpu: 20m, memory: 80Mi}
    store:
      secretRef: {name: etcd-backup}
      container: bucket-main
      provider: gcp
      prefix: shoot--dev--b--uid/etcd-main
    fullSnapshotSchedule: "0 4 * * *"
    deltaSnapshotPeriod: 5m
    deltaSnapshotMemoryLimit: 100Mi
    garbageCollectionPolicy: Exponential
    garbageCollectionPeriod: 12h
  storageCapacity: 25Gi
  volumeClaimTemplate: main-etcd
`,
	"etcd-events": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-events
  annotations: {resources.druid.gardener.cloud/allow-unhealthy-pod-eviction: ""}
spec:
  replicas: 1
  priorityClassName: gardener-system-500
  labels: {gardener.cloud/role: controlplane, role: events, app: etcd-statefulset}
  etcd:
    metrics: basic
    defragmentationSchedule: "34 12 * * *"
    quota: 8Gi
    clientPort: 2379
    serverPort: 2380
    wrapperPort: 9095
    resources:
      requests: {cpu: 30m, memory: 150M}
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd-bundle-1a2b3c4d, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-events-2b3c4d5e}
      clientTLSSecretRef: {name: etcd-client-9c0d1e2f}
  backup:
    port: 8080
    resources:
      requests: {cpu: 10m, memory: 40Mi}
    snapshotCompaction:
      resources:
        requests: {cpu: 600m, memory: 3Gi}
    compression: {enabled: true, policy: gzip}
    garbageCollectionPolicy: Exponential
    garbageCollectionPeriod: 12h
  storageCapacity: 10Gi
  volumeClaimTemplate: etcd-events
`,
	"etcd-main, hibernated, highly available": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
spec:
  replicas: 0
  labels: {gardener.cloud/role: controlplane, role: main, app: etcd-statefulset}
  etcd:
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-main}
      clientTLSSecretRef: {name: etcd-client}
    peerUrlTls:
      tlsCASecretRef: {name: ca-etcd-peer, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-peer-server-main}
  backup:
    store:
      secretRef: {name: etcd-backup}
      container: bucket-main
      provider: S3
      prefix: shoot--dev--c--uid/etcd-main
`,
	"etcd-events, seed's default storage class (provider extension)": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-events
spec:
  replicas: 1
  priorityClassName: gardener-system-500
  labels: {gardener.cloud/role: controlplane, role: events, app: etcd-statefulset}
  etcd:
    metrics: basic
    defragmentationSchedule: "34 12 * * *"
    quota: 8Gi
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd-bundle-1a2b3c4d, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-events-2b3c4d5e}
      clientTLSSecretRef: {name: etcd-client-9c0d1e2f}
  backup:
    port: 8080
  storageClass: ""
  storageCapacity: 10Gi
  volumeClaimTemplate: etcd-events
`,
	"etcd-main, seed's default storage class (provider extension without a configured class)": `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
spec:
  replicas: 3
  priorityClassName: gardener-system-500
  labels: {gardener.cloud/role: controlplane, role: main, app: etcd-statefulset}
  etcd:
    metrics: extensive
    defragmentationSchedule: "34 12 * * *"
    quota: 8Gi
    clientUrlTls:
      tlsCASecretRef: {name: ca-etcd, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-server-main}
      clientTLSSecretRef: {name: etcd-client}
    peerUrlTls:
      tlsCASecretRef: {name: ca-etcd-peer, dataKey: bundle.crt}
      serverTLSSecretRef: {name: etcd-peer-server-main}
  backup:
    store:
      secretRef: {name: etcd-backup}
      container: bucket-main
      provider: aws
      prefix: shoot--dev--d--uid/etcd-main
  storageClass: ""
  storageCapacity: 25Gi
  volumeClaimTemplate: main-etcd
`,
}
