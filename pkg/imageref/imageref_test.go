package imageref

import "testing"

func TestSplit(t *testing.T) {
	for image, want := range map[string][3]string{
		"etcd-druid":                                    {"etcd-druid", "", ""},
		"ghcr.io/x/etcd-druid:v1":                       {"ghcr.io/x/etcd-druid", "v1", ""},
		"registry.local:5000/etcd-druid":                {"registry.local:5000/etcd-druid", "", ""},
		"registry.local:5000/etcd-druid:v2":             {"registry.local:5000/etcd-druid", "v2", ""},
		"registry.local:5000/etcd-druid@sha256:ab12":    {"registry.local:5000/etcd-druid", "", "sha256:ab12"},
		"registry.local:5000/etcd-druid:v2@sha256:ab12": {"registry.local:5000/etcd-druid", "v2", "sha256:ab12"},
		"europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1":         {"europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl", "v0.35.1", ""},
		"europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl@sha256:0123abcd": {"europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl", "", "sha256:0123abcd"},
		"registry.local:5000/gardener-etcd/etcd-wrapper:v0.1.0@sha256:0123":                  {"registry.local:5000/gardener-etcd/etcd-wrapper", "v0.1.0", "sha256:0123"},
	} {
		if repo, tag, digest := Split(image); repo != want[0] || tag != want[1] || digest != want[2] {
			t.Errorf("%s: got %s %s %s, want %v", image, repo, tag, digest, want)
		}
	}
}
