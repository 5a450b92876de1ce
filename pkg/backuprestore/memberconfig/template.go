package memberconfig

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Cluster states of etcd's initial-cluster-state.
const (
	ClusterStateNew      = "new"
	ClusterStateExisting = "existing"
)

// TemplatePath is the template file of this process: $ETCD_CONF (etcdpod.EnvConfigPath), else where the
// StatefulSet mounts it (etcdpod.ConfigFilePath).
func TemplatePath() string {
	if p := os.Getenv(etcdpod.EnvConfigPath); p != "" {
		return p
	}
	return etcdpod.ConfigFilePath
}

// Template is the parsed configuration template: etcd's YAML keys with the per-member maps still in it.
type Template map[string]any

// LoadTemplate reads a template file. The file is re-read on every call because the kubelet updates a
// mounted ConfigMap in place; a member started later must see the current template.
func LoadTemplate(path string) (Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the etcd configuration template: %w", err)
	}
	return ParseTemplate(data)
}

// ParseTemplate parses template YAML.
func ParseTemplate(data []byte) (Template, error) {
	t := Template{}
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("parsing the etcd configuration template: %w", err)
	}
	return t, nil
}

// DataDir is the template's data-dir.
func (t Template) DataDir() string { return t.str(etcdpod.KeyDataDir) }

// QuotaBackendBytes is the template's quota-backend-bytes, 0 when it has none (etcd then takes its default).
func (t Template) QuotaBackendBytes() int64 {
	switch v := t[keyQuotaBackendBytes].(type) {
	case float64: // YAML numbers arrive through JSON
		return int64(v)
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// keyQuotaBackendBytes is etcd's --quota-backend-bytes in the configuration file (etcdpod.ConfigTemplate).
const keyQuotaBackendBytes = "quota-backend-bytes"

func (t Template) str(key string) string {
	s, _ := t[key].(string)
	return s
}

// urlsOf returns the URLs of pod under key: the pod's entry when the value is a map (druid's template), or
// the comma-separated value itself when the template already names one member's URLs.
func (t Template) urlsOf(key, pod string) ([]string, error) {
	switch v := t[key].(type) {
	case string:
		return splitURLs(v), nil
	case map[string]any:
		entry, ok := v[pod]
		if !ok {
			return nil, fmt.Errorf("%s has no entry for pod %q", key, pod)
		}
		return stringList(entry, key)
	case nil:
		return nil, fmt.Errorf("the template has no %s", key)
	default:
		return nil, fmt.Errorf("%s is a %T, want a map from pod name to URLs", key, v)
	}
}

func stringList(v any, key string) ([]string, error) {
	switch l := v.(type) {
	case string:
		return splitURLs(l), nil
	case []any:
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s contains a %T, want URL strings", key, e)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s entry is a %T, want a list of URLs", key, v)
	}
}
