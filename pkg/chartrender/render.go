// Package chartrender renders the embedded Helm charts (package charts) with Helm's own template engine
// and returns the objects. The seed bootstrap applies what it renders, so the chart an operator installs
// with `helm install` and the objects the bootstrap writes are one source of truth.
package chartrender

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	helmcommon "helm.sh/helm/v4/pkg/chart/common"
	helmutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/gardener-etcd/gardener-etcd/charts"
)

// Load reads one of the embedded charts (charts.EtcdDruid, charts.ExtensionBackup).
func Load(name string) (*chartv2.Chart, error) {
	var files []*archive.BufferedFile
	err := fs.WalkDir(charts.FS, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := charts.FS.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, &archive.BufferedFile{Name: strings.TrimPrefix(p, name+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", name, err)
	}
	c, err := chartloader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", name, err)
	}
	return c, nil
}

// Release names the release the way `helm install <name> -n <namespace>` would.
type Release struct {
	Name      string
	Namespace string
}

// Render renders the chart's templates with values merged over the chart's values.yaml and returns the
// objects in a stable order (by template file, then document). CRDs from crds/ are not included: Helm
// installs them separately, and callers read them with charts.CRDs.
func Render(c *chartv2.Chart, release Release, values map[string]any) ([]*unstructured.Unstructured, error) {
	renderValues, err := helmutil.ToRenderValues(c, values,
		helmcommon.ReleaseOptions{Name: release.Name, Namespace: release.Namespace, IsInstall: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values: %w", c.Name(), err)
	}
	rendered, err := engine.Render(c, renderValues)
	if err != nil {
		return nil, fmt.Errorf("chart %s: rendering: %w", c.Name(), err)
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		if path.Ext(name) == ".yaml" || path.Ext(name) == ".yml" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var objects []*unstructured.Unstructured
	for _, name := range names {
		objs, err := decode(rendered[name])
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", c.Name(), name, err)
		}
		objects = append(objects, objs...)
	}
	return objects, nil
}

// RenderEmbedded loads and renders an embedded chart.
func RenderEmbedded(name string, release Release, values map[string]any) ([]*unstructured.Unstructured, error) {
	c, err := Load(name)
	if err != nil {
		return nil, err
	}
	return Render(c, release, values)
}

// decode splits a rendered template into objects, skipping empty documents (disabled templates).
func decode(manifest string) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(manifest), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := decoder.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document without apiVersion/kind: %v", obj)
		}
		objects = append(objects, u)
	}
}
