package kubeletnode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// kubeletConfig is the node's kubelet configuration. Everything that defaults to a host-wide path (root,
// pod logs, cgroup parent) is the node's own; eviction thresholds are low because the host's disk is shared
// by every node and by the tests, and one node evicting pods for the others' files helps nobody.
func (c Config) kubeletConfig() *kubeletv1beta1.KubeletConfiguration {
	return &kubeletv1beta1.KubeletConfiguration{
		TypeMeta:                 metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		FailCgroupV1:             ptr.To(false),
		CgroupDriver:             "cgroupfs",
		CgroupRoot:               c.CgroupRoot(),
		CgroupsPerQOS:            ptr.To(true),
		FailSwapOn:               ptr.To(false),
		ContainerRuntimeEndpoint: "unix://" + c.containerdSocket(),
		Address:                  c.NodeIP.String(),
		ReadOnlyPort:             0,
		HealthzBindAddress:       "127.0.0.1",
		ClusterDNS:               []string{c.ClusterDNS.String()},
		ClusterDomain:            c.ClusterDomain,
		ResolverConfig:           ptr.To(c.path("resolv.conf")),
		PodLogsDir:               c.path("pod-logs"),
		Authentication: kubeletv1beta1.KubeletAuthentication{
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: c.ClientCAFile},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		EvictionHard: map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%",
		},
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		SerializeImagePulls:         ptr.To(false),
		// Status every few seconds: the e2e scenarios watch nodes and pods come and go.
		NodeStatusReportFrequency: metav1.Duration{Duration: 10 * time.Second},
		SyncFrequency:             metav1.Duration{Duration: 10 * time.Second},
	}
}

// kubeletArgs are the flags that have no configuration-file field.
func (c Config) kubeletArgs(configPath string) []string {
	return []string{
		"--config=" + configPath,
		"--kubeconfig=" + c.KubeletKubeconfig,
		"--root-dir=" + c.path("kubelet"),
		"--cert-dir=" + c.path("kubelet", "pki"),
		"--hostname-override=" + c.Name,
		"--node-ip=" + c.NodeIP.String(),
		"--node-labels=topology.kubernetes.io/zone=" + c.Zone,
		"--v=1",
	}
}

// hostResolvConfs are where the host's resolver configuration is read from, best first: systemd-resolved's
// list of the real upstream servers (its /etc/resolv.conf names 127.0.0.53, a loopback address the node's
// network namespace does not have), then /etc/resolv.conf.
var hostResolvConfs = []string{"/run/systemd/resolve/resolv.conf", "/etc/resolv.conf"}

// writeKubeletFiles writes the kubelet configuration and the resolv.conf pods with dnsPolicy Default (and
// CoreDNS, for names outside the cluster) get: the host's upstream resolvers.
func (c Config) writeKubeletFiles() (configPath string, err error) {
	configPath = c.path("kubelet-config.json")
	data, err := jsonOf(c.kubeletConfig())
	if err != nil {
		return "", err
	}
	var resolv []byte // none found: pods resolve cluster names only
	for _, path := range hostResolvConfs {
		if resolv, err = os.ReadFile(path); err == nil {
			break
		}
	}
	return configPath, writeFiles(map[string][]byte{configPath: data, c.path("resolv.conf"): resolv})
}

// writeFiles writes each file (world-readable: configurations, no secrets), creating its directory.
func writeFiles(files map[string][]byte) error {
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func jsonOf(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	return data, nil
}
