package node

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fieldValue resolves a downward API field path of the pod.
func (w *podWorker) fieldValue(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return w.podIP(), nil
	case "status.hostIP", "status.hostIPs":
		return w.n.cfg.Network.Gateway.String(), nil
	}
	return "", fmt.Errorf("unsupported downward API field %q", path)
}

func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// resourceValue resolves requests/limits of a container; an unset limit reports the node's capacity.
func resourceValue(pod *corev1.Pod, ref *corev1.ResourceFieldSelector) (string, error) {
	var container *corev1.Container
	for i := range pod.Spec.Containers {
		if ref.ContainerName == "" || pod.Spec.Containers[i].Name == ref.ContainerName {
			container = &pod.Spec.Containers[i]
			break
		}
	}
	if container == nil {
		return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	list := container.Resources.Limits
	if kind == "requests" {
		list = container.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		q = capacity()[corev1.ResourceName(name)]
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == "cpu" {
		return fmt.Sprint((q.MilliValue() + divisor.MilliValue() - 1) / divisor.MilliValue()), nil
	}
	return fmt.Sprint((q.Value() + divisor.Value() - 1) / divisor.Value()), nil
}
