package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// defaultFileMode is the kubelet's default for configMap, secret, downwardAPI and projected files.
const defaultFileMode = 0o644

// volumeFile is one file of a rendered volume.
type volumeFile struct {
	path string
	data []byte
	mode os.FileMode
}

// prepareVolumes creates emptyDirs and renders configMap, secret, downwardAPI and projected volumes
// (again on every call, so a restarted container sees current content); PVCs resolve to the bound PV's
// directory. The result maps a volume name to the host path bind-mounted for it.
func (w *podWorker) prepareVolumes(ctx context.Context) (map[string]string, error) {
	pod := w.current()
	paths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		path, err := w.volumeSource(ctx, pod, v)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		paths[v.Name] = path
	}
	return paths, nil
}

// volumeSource prepares one volume and returns its host path.
func (w *podWorker) volumeSource(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (string, error) {
	dir := w.volumeDir(v.Name)
	var files []volumeFile
	var err error
	switch {
	case v.EmptyDir != nil:
		// World-writable like the kubelet's emptyDir, so any runAsUser can use it.
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", err
		}
		return dir, os.Chmod(dir, 0o777)
	case v.PersistentVolumeClaim != nil:
		return w.claimPath(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
	case v.HostPath != nil:
		if _, err := os.Stat(v.HostPath.Path); err != nil {
			return "", fmt.Errorf("hostPath %s: %w", v.HostPath.Path, err)
		}
		return v.HostPath.Path, nil
	case v.ConfigMap != nil:
		files, err = w.configMapFiles(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, v.ConfigMap.DefaultMode)
	case v.Secret != nil:
		files, err = w.secretFiles(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, v.Secret.DefaultMode)
	case v.DownwardAPI != nil:
		files, err = w.downwardFiles(pod, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
	case v.Projected != nil:
		files, err = w.projectedFiles(ctx, pod, v.Projected)
	default:
		return "", fmt.Errorf("unsupported volume type (supported: emptyDir, configMap, secret, downwardAPI, projected, persistentVolumeClaim, hostPath)")
	}
	if err != nil {
		return "", err
	}
	return dir, writeVolume(dir, files, pod.Spec.SecurityContext)
}

// writeVolume writes the files owned by root and the pod's fsGroup, group-readable when an fsGroup is set,
// like the kubelet. Every container start renders the pod's volumes again while its other containers run
// and read them, so a file is replaced atomically (written beside it, then renamed over it) and only when
// its content changed: a reader sees the old or the new file, never a truncated one. Containers mount the
// volume directory, so they see the renamed file; a subPath mount of a single file keeps the old one, as
// with the kubelet.
func writeVolume(dir string, files []volumeFile, sc *corev1.PodSecurityContext) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gid := -1
	if sc != nil && sc.FSGroup != nil {
		gid = int(*sc.FSGroup)
		_ = os.Chown(dir, 0, gid)
	}
	for _, f := range files {
		path := filepath.Join(dir, filepath.Clean("/"+f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := f.mode
		if gid >= 0 {
			mode |= 0o440
		}
		if err := replaceFile(path, f.data, mode, gid); err != nil {
			return err
		}
	}
	return nil
}

// replaceFile makes path hold data with mode (and group gid unless negative): in place when only the
// metadata differs, else by renaming a new file over it.
func replaceFile(path string, data []byte, mode os.FileMode, gid int) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return setOwnerAndMode(path, mode, gid)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = setOwnerAndMode(tmp.Name(), mode, gid)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

func setOwnerAndMode(path string, mode os.FileMode, gid int) error {
	if gid >= 0 {
		if err := os.Chown(path, 0, gid); err != nil {
			return err
		}
	}
	return os.Chmod(path, mode)
}

func fileMode(item, def *int32) os.FileMode {
	switch {
	case item != nil:
		return os.FileMode(*item)
	case def != nil:
		return os.FileMode(*def)
	}
	return defaultFileMode
}

func (w *podWorker) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def *int32) ([]volumeFile, error) {
	cm, err := w.n.cfg.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if ptr.Deref(optional, false) {
			return nil, nil
		}
		return nil, fmt.Errorf("configMap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles("configMap "+name, data, items, optional, def)
}

func (w *podWorker) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def *int32) ([]volumeFile, error) {
	secret, err := w.n.cfg.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if ptr.Deref(optional, false) {
			return nil, nil
		}
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return keyFiles("secret "+name, secret.Data, items, optional, def)
}

// keyFiles maps keys to files: all keys, or only the listed items at their paths.
func keyFiles(what string, data map[string][]byte, items []corev1.KeyToPath, optional *bool, def *int32) ([]volumeFile, error) {
	var files []volumeFile
	if len(items) == 0 {
		for k, v := range data {
			files = append(files, volumeFile{path: k, data: v, mode: fileMode(nil, def)})
		}
		return files, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if ptr.Deref(optional, false) {
				continue
			}
			return nil, fmt.Errorf("%s has no key %q", what, item.Key)
		}
		files = append(files, volumeFile{path: item.Path, data: v, mode: fileMode(item.Mode, def)})
	}
	return files, nil
}

func (w *podWorker) downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, def *int32) ([]volumeFile, error) {
	var files []volumeFile
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil:
			value, err = w.fieldValue(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			value, err = resourceValue(pod, item.ResourceFieldRef)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, volumeFile{path: item.Path, data: []byte(value), mode: fileMode(item.Mode, def)})
	}
	return files, nil
}

func (w *podWorker) projectedFiles(ctx context.Context, pod *corev1.Pod, p *corev1.ProjectedVolumeSource) ([]volumeFile, error) {
	var files []volumeFile
	for _, src := range p.Sources {
		var more []volumeFile
		var err error
		switch {
		case src.ServiceAccountToken != nil:
			more, err = w.tokenFile(ctx, pod, src.ServiceAccountToken, p.DefaultMode)
		case src.ConfigMap != nil:
			more, err = w.configMapFiles(ctx, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, p.DefaultMode)
		case src.Secret != nil:
			more, err = w.secretFiles(ctx, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional, p.DefaultMode)
		case src.DownwardAPI != nil:
			more, err = w.downwardFiles(pod, src.DownwardAPI.Items, p.DefaultMode)
		default:
			err = fmt.Errorf("unsupported projected source")
		}
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// tokenFile requests a token bound to the pod through the TokenRequest API, as the kubelet does.
func (w *podWorker) tokenFile(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection, def *int32) ([]volumeFile, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	token, err := w.n.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for service account %s: %w", sa, err)
	}
	return []volumeFile{{path: src.Path, data: []byte(token.Status.Token), mode: fileMode(nil, def)}}, nil
}

// claimPath returns the directory of the PV bound to a claim.
func (w *podWorker) claimPath(ctx context.Context, ns, claim string) (string, error) {
	pvc, err := w.n.cfg.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("claim %s: %w", claim, err)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("claim %s is not bound yet", claim)
	}
	pv, err := w.n.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("volume %s of claim %s: %w", pvc.Spec.VolumeName, claim, err)
	}
	var path string
	switch {
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	default:
		return "", fmt.Errorf("volume %s is neither local nor hostPath", pv.Name)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("directory of volume %s: %w", pv.Name, err)
	}
	return path, nil
}
