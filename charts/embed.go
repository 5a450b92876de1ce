// Package charts embeds the Helm charts of etcd-druid and the backup extension. Their crds/ directories are
// the one place controller-gen writes the CRDs to (make generate): the charts install them, and the envtest
// harness, the seed bootstrap and the local seed read them from here.
package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// FS holds the chart directories etcd-druid/ and gardener-extension-backup/.
//
//go:embed all:etcd-druid all:gardener-extension-backup
var FS embed.FS

// Chart directories inside FS.
const (
	EtcdDruid       = "etcd-druid"
	ExtensionBackup = "gardener-extension-backup"
)

// CRDs returns the CustomResourceDefinitions shipped in the given charts (all charts when none is named).
func CRDs(chartNames ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if len(chartNames) == 0 {
		chartNames = []string{EtcdDruid, ExtensionBackup}
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, chart := range chartNames {
		files, err := fs.Glob(FS, path.Join(chart, "crds", "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			data, err := FS.ReadFile(file)
			if err != nil {
				return nil, err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				return nil, fmt.Errorf("decoding CRD %s: %w", file, err)
			}
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

// AppVersion is the appVersion of the named chart: the tag its images default to.
func AppVersion(chart string) (string, error) {
	data, err := FS.ReadFile(path.Join(chart, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil || meta.AppVersion == "" {
		return "", fmt.Errorf("chart %s has no appVersion (%v)", chart, err)
	}
	return meta.AppVersion, nil
}
