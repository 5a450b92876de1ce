package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// defaultPath is the PATH of containers that set none (the container's view is the host's root).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// containerEnv builds the environment like the kubelet: service-host variables of the apiserver, envFrom,
// then env in order with $(VAR) references to earlier variables expanded.
func (w *podWorker) containerEnv(ctx context.Context, pod *corev1.Pod, c corev1.Container) ([]string, map[string]string, error) {
	var keys []string
	values := map[string]string{}
	set := func(k, v string) {
		if _, ok := values[k]; !ok {
			keys = append(keys, k)
		}
		values[k] = v
	}
	host, port := w.n.cfg.APIServerHost, strconv.Itoa(w.n.cfg.APIServerPort)
	set("PATH", defaultPath)
	set("HOSTNAME", hostnameOf(pod))
	set("KUBERNETES_SERVICE_HOST", host)
	set("KUBERNETES_SERVICE_PORT", port)
	set("KUBERNETES_SERVICE_PORT_HTTPS", port)
	set("KUBERNETES_PORT", "tcp://"+host+":"+port)
	for _, from := range c.EnvFrom {
		data, err := w.envFromData(ctx, pod.Namespace, from)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, values))
			continue
		}
		v, err := w.envValueFrom(ctx, pod, e.ValueFrom)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, v)
	}
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+values[k])
	}
	return env, values, nil
}

func hostnameOf(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

func (w *podWorker) envFromData(ctx context.Context, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	client := w.n.cfg.Client.CoreV1()
	switch {
	case from.ConfigMapRef != nil:
		cm, err := client.ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			if ptr.Deref(from.ConfigMapRef.Optional, false) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom configMap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := client.Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			if ptr.Deref(from.SecretRef.Optional, false) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		data := map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

func (w *podWorker) envValueFrom(ctx context.Context, pod *corev1.Pod, from *corev1.EnvVarSource) (string, error) {
	switch {
	case from.FieldRef != nil:
		return w.fieldValue(pod, from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		return resourceValue(pod, from.ResourceFieldRef)
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := w.n.cfg.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := cm.Data[ref.Key]; ok {
				return v, nil
			}
			err = fmt.Errorf("configMap %s has no key %q", ref.Name, ref.Key)
		}
		if ptr.Deref(ref.Optional, false) {
			return "", nil
		}
		return "", err
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := w.n.cfg.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := s.Data[ref.Key]; ok {
				return string(v), nil
			}
			err = fmt.Errorf("secret %s has no key %q", ref.Name, ref.Key)
		}
		if ptr.Deref(ref.Optional, false) {
			return "", nil
		}
		return "", err
	}
	return "", fmt.Errorf("unsupported valueFrom")
}

// expand replaces $(VAR) by its value when defined, turns $$ into $ and leaves unknown references as
// they are: the kubelet's rules for command, args and env values.
func expand(s string, values map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := values[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
