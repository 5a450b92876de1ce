package localseed

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// hardened is the security context every pod of the project runs with; the nodes enforce it.
var hardened = &corev1.SecurityContext{
	RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
	Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
}

// TestSeed runs pods on the seed's nodes (kubelet, containerd, runc, CNI, kube-proxy, CoreDNS) from an image
// pushed to the seed's registry, stops and restarts its S3 server, and checks that Stop leaves nothing behind.
func TestSeed(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	localseedtest.SkipUnlessNodeTools(t, NodeTools)
	checkKernelSetting := expectKernelSettingKept(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	begin := time.Now()
	// The state directory is reached through a symbolic link: mountinfo names the resolved paths, so a
	// teardown that compared the link's path would find no mount to detach.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	seed, err := Start(ctx, Options{Nodes: 2, S3: true, StateDir: filepath.Join(link, "state"),
		Log: testr.NewWithOptions(t, testr.Options{Verbosity: 0})})
	if err != nil {
		t.Fatalf("starting seed: %v", err)
	}
	t.Logf("DURATION control plane + S3 + registry + seed images + 2 nodes + CoreDNS: %s", time.Since(begin).Round(time.Millisecond))
	stateDir := seed.StateDir()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = seed.Stop(context.Background())
		}
	})
	defer func() {
		if t.Failed() { // the nodes' own logs and the pods' logs, not their container file systems
			for _, node := range seed.NodeNames() {
				localseedtest.LogTails(t, filepath.Join(stateDir, "nodes", node, "logs"), 3000)
				localseedtest.LogTails(t, filepath.Join(stateDir, "nodes", node, "pod-logs"), 3000)
			}
		}
	}()
	client := kubernetes.NewForConfigOrDie(seed.RESTConfig())

	t.Run("nodes are kubelets on containerd 2", func(t *testing.T) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 2 {
			t.Fatalf("want 2 nodes, got %d (%v)", len(nodes.Items), err)
		}
		for _, n := range nodes.Items {
			info := n.Status.NodeInfo
			if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://2.") || !strings.HasPrefix(info.KubeletVersion, "v1.") {
				t.Errorf("node %s: runtime %q, kubelet %q", n.Name, info.ContainerRuntimeVersion, info.KubeletVersion)
			}
			if n.Labels["topology.kubernetes.io/zone"] == "" {
				t.Errorf("node %s has no zone label", n.Name)
			}
		}
	})

	t.Run("S3 stops and starts again with its objects", func(t *testing.T) {
		marker := filepath.Join(seed.S3().Dir, "outage-test")
		if err := os.MkdirAll(marker, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := seed.StopS3(); err != nil {
			t.Fatalf("StopS3: %v", err)
		}
		if _, err := tryGet(seed.S3().Endpoint + "/health"); err == nil {
			t.Fatal("S3 still answers after StopS3")
		}
		if err := seed.StopS3(); err != nil {
			t.Fatalf("StopS3 on a stopped server: %v", err)
		}
		if err := seed.StartS3(ctx); err != nil {
			t.Fatalf("StartS3: %v", err)
		}
		if err := seed.StartS3(ctx); err != nil {
			t.Fatalf("StartS3 on a running server: %v", err)
		}
		if _, err := tryGet(seed.S3().Endpoint + "/health"); err != nil {
			t.Fatalf("S3 does not answer after StartS3: %v", err)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the S3 backend lost its data: %v", err)
		}
	})

	image, err := seed.PushImage(ctx, "../..", imagebuild.Binary{Name: "httpecho", Package: "./pkg/localseed/testdata/httpecho"})
	if err != nil {
		t.Fatalf("pushing the test image: %v", err)
	}
	ns := "echo"
	pods := startEchoPods(ctx, t, client, ns, image, hardened)

	t.Run("pods run the pushed image by digest, non-root", func(t *testing.T) {
		digest := image[strings.Index(image, "@")+1:]
		for _, p := range pods {
			if got := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, digest) {
				t.Errorf("pod %s runs image %s, want %s", p.Name, got, digest)
			}
			if got := httpGet(t, "http://"+p.Status.PodIP+":8080/uid"); got != "65532" {
				t.Errorf("pod %s runs as uid %q, want 65532", p.Name, got)
			}
		}
	})

	t.Run("pod to pod across nodes by name through CoreDNS, and through a ClusterIP Service", func(t *testing.T) {
		clusterIP := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-any", Namespace: ns}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"}, Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
		if _, err := client.CoreV1().Services(ns).Create(ctx, clusterIP, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		from := pods["echo-0"].Status.PodIP
		for host, want := range map[string]string{
			"echo-1.echo." + ns + ".svc.cluster.local": "echo-1", // headless: the pod's own address
			"echo-2.echo":                           "echo-2", // search path of the pod's resolv.conf
			"echo-any." + ns + ".svc.cluster.local": "echo-",  // ClusterIP: kube-proxy picks any of the three
		} {
			asked := time.Now()
			eventually(t, 30*time.Second, func() (bool, string) {
				got, err := tryGet("http://" + from + ":8080/peer?host=" + host)
				return err == nil && strings.HasPrefix(got, want), host + ": " + got
			}, func() {})
			t.Logf("%s answered after %s", host, time.Since(asked).Round(time.Millisecond))
		}
	})

	t.Run("graceful deletion and data surviving the pod", func(t *testing.T) {
		checkDataSurvivesPodDeletion(ctx, t, client, ns, pods["echo-0"])
	})

	t.Run("unknown image", func(t *testing.T) {
		checkUnknownImage(ctx, t, client, ns, seed.Registry()+"/localseed/does-not-exist:1", "ErrImagePull", "ImagePullBackOff")
	})

	stopAndCheckNothingLeft(ctx, t, seed, &stopped)
	checkKernelSetting()
}

// TestRefuseALongStateDir: a state dir whose path leaves no room for the kubelets' unix sockets is
// refused up front, naming the limit, instead of kubelets that fail to bind and nodes that never get Ready.
func TestRefuseALongStateDir(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	long := filepath.Join(t.TempDir(), strings.Repeat("d", maxStateDirLen))
	_, err := Start(context.Background(), Options{Nodes: 1, StateDir: long, BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "characters long") {
		t.Fatalf("Start with a %d-character state dir: %v", len(long), err)
	}
}

// startEchoPods creates namespace ns with the echo StatefulSet (see createEchoStatefulSet) and waits until
// its 3 pods are Ready.
func startEchoPods(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, image string, harden *corev1.SecurityContext) map[string]*corev1.Pod {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createEchoStatefulSet(ctx, t, client, ns, image, harden)
	podStart := time.Now()
	pods := waitForPods(ctx, t, client, ns, 3, isReady)
	t.Logf("DURATION 3 StatefulSet pods (with PVCs) created to Ready: %s", time.Since(podStart).Round(time.Millisecond))
	return pods
}

// checkDataSurvivesPodDeletion writes into the volume of pod old, deletes it and checks that its
// replacement becomes Ready (within waitForPod's bound), reads the value back, and that the old one was stopped with SIGTERM.
func checkDataSurvivesPodDeletion(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, old *corev1.Pod) {
	t.Helper()
	httpGet(t, "http://"+old.Status.PodIP+":8080/write?v=persisted")
	if err := client.CoreV1().Pods(ns).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recreated := time.Now()
	p := waitForPod(ctx, t, client, ns, old.Name, func(p *corev1.Pod) bool { return p.UID != old.UID && isReady(p) })
	// Logged, not asserted: about a second normally, but a loaded machine stretches it, and waitForPod's
	// bound already fails a replacement that never comes. (A stale neighbour entry for a reused address
	// once made it 26-59 s; the reads below check that the replacement is reachable at its address.)
	t.Logf("DURATION deleted pod replaced and Ready: %s (address %s, before %s)", time.Since(recreated).Round(time.Millisecond), p.Status.PodIP, old.Status.PodIP)
	if got := httpGet(t, "http://"+p.Status.PodIP+":8080/read"); got != "persisted" {
		t.Fatalf("data after pod re-creation = %q", got)
	}
	if got := httpGet(t, "http://"+p.Status.PodIP+":8080/file?path=/data/sigterm"); got != old.Name {
		t.Fatalf("the deleted pod did not record SIGTERM: %q", got)
	}
}

// checkUnknownImage creates a pod of an image that does not exist and waits until its container waits for
// one of the reasons.
func checkUnknownImage(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, image string, reasons ...string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unknown", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPod(ctx, t, client, ns, "unknown", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			slices.Contains(reasons, p.Status.ContainerStatuses[0].State.Waiting.Reason)
	})
}

// stopAndCheckNothingLeft stops the seed and fails for anything it left behind.
func stopAndCheckNothingLeft(ctx context.Context, t *testing.T, seed *Seed, stopped *bool) {
	t.Helper()
	stateDir, prefix := seed.StateDir(), seed.Prefix()
	stopBegin := time.Now()
	if err := seed.Stop(ctx); err != nil {
		t.Fatalf("stopping seed: %v", err)
	}
	*stopped = true
	t.Logf("DURATION stop: %s", time.Since(stopBegin).Round(time.Millisecond))
	assertNothingLeft(t, stateDir, prefix)
}

func assertNothingLeft(t *testing.T, stateDir, prefix string) {
	t.Helper()
	for _, left := range Leftovers(stateDir, prefix) {
		t.Errorf("left behind: %s", left)
	}
}

// createEchoStatefulSet creates 3 httpecho pods of image with a headless Service and a PVC each; harden
// (nil: none) is the containers' security context.
func createEchoStatefulSet(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, image string, harden *corev1.SecurityContext) {
	t.Helper()
	labels := map[string]string{"app": "echo"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To(int32(3)), ServiceName: "echo", PodManagementPolicy: appsv1.ParallelPodManagement,
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To(int64(10)),
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(65532)), FSGroup: ptr.To(int64(65532))},
			Containers: []corev1.Container{{
				Name: "echo", Image: image, SecurityContext: harden, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
				LivenessProbe: &corev1.Probe{PeriodSeconds: 2, FailureThreshold: 3,
					ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}},
	}}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.Status.Phase == corev1.PodRunning
		}
	}
	return false
}

// waitForPods polls until n pods in ns satisfy ok (a minute at most).
func waitForPods(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, n int, ok func(*corev1.Pod) bool) map[string]*corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			matching := map[string]*corev1.Pod{}
			for i := range list.Items {
				if ok(&list.Items[i]) {
					matching[list.Items[i].Name] = &list.Items[i]
				}
			}
			if len(matching) == n {
				return matching
			}
			if time.Now().After(deadline) {
				for _, p := range list.Items {
					t.Logf("pod %s: %+v", p.Name, p.Status)
				}
				t.Fatalf("%d of %d pods in %s reached the condition", len(matching), n, ns)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitForPod(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			if p != nil {
				t.Logf("pod %s: %+v", name, p.Status)
			}
			t.Fatalf("pod %s/%s did not reach the condition (%v)", ns, name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// eventually polls cond every 200 ms until it holds or timeout passes; then it runs dump and fails
// with cond's last message.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string), dump func()) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			dump()
			t.Fatalf("after %s: %s", timeout, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tryGet returns the body of a GET, or the error.
func tryGet(url string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
