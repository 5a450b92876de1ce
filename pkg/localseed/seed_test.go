package localseed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
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

	"github.com/gardener-etcd/gardener-etcd/test/localseedtest"
)

const testImage = "httpecho:test"

// podLogDir is dumped when a wait fails, so a failing test shows the containers' output.
var podLogDir string

// buildHTTPEcho compiles the test pod program.
func buildHTTPEcho(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "httpecho")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/httpecho")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building httpecho: %v\n%s", err, out)
	}
	return bin
}

// TestSeed runs one seed through the whole pod lifecycle and checks that Stop leaves nothing behind.
func TestSeed(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin := buildHTTPEcho(t)

	begin := time.Now()
	seed, err := Start(ctx, Options{Images: map[string]string{testImage: bin}, S3: true, Log: testr.NewWithOptions(t, testr.Options{Verbosity: 0})})
	if err != nil {
		t.Fatalf("starting seed: %v", err)
	}
	t.Logf("DURATION control plane + nodes + S3 start: %s", time.Since(begin).Round(time.Millisecond))
	stateDir := seed.StateDir()
	podLogDir = filepath.Join(stateDir, "logs", "pods")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = seed.Stop(context.Background())
		}
	})
	client := kubernetes.NewForConfigOrDie(seed.RESTConfig())

	t.Run("control plane and nodes", func(t *testing.T) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 3 {
			t.Fatalf("want 3 nodes, got %v (%v)", len(nodes.Items), err)
		}
		if _, err := os.Stat(seed.Kubeconfig()); err != nil {
			t.Fatalf("kubeconfig: %v", err)
		}
		resp, err := http.Get(seed.S3().Endpoint + "/health")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("S3 health: %v %v", resp, err)
		}
		_ = resp.Body.Close()
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

	ns := "echo"
	pods := startEchoPods(ctx, t, client, ns, testImage, nil)

	t.Run("pods have distinct IPs and serve their hostname", func(t *testing.T) {
		seen := map[string]bool{}
		for _, p := range pods {
			if p.Status.PodIP == "" || seen[p.Status.PodIP] {
				t.Fatalf("pod %s has no or a duplicate IP %q", p.Name, p.Status.PodIP)
			}
			seen[p.Status.PodIP] = true
			if got := httpGet(t, "http://"+p.Status.PodIP+":8080/"); got != p.Name {
				t.Fatalf("pod %s answered hostname %q", p.Name, got)
			}
			if got := httpGet(t, "http://"+p.Status.PodIP+":8080/uid"); got != "65532" {
				t.Fatalf("pod %s runs as uid %q, want 65532", p.Name, got)
			}
		}
	})

	t.Run("pod to pod by headless-service FQDN and service name", func(t *testing.T) {
		from := pods["echo-0"].Status.PodIP
		// Peers are published in the hosts files before they are reported Ready, so this normally
		// succeeds at the first attempt; the bound covers Go's resolver, which re-reads /etc/hosts at
		// most every 5 s.
		for _, host := range []string{"echo-1.echo." + ns + ".svc", "echo-2.echo." + ns + ".svc.cluster.local"} {
			want := strings.SplitN(host, ".", 2)[0]
			eventually(t, 15*time.Second, func() (bool, string) {
				got, err := tryGet("http://" + from + ":8080/peer?host=" + host)
				return err == nil && got == want, fmt.Sprintf("peer %s answered %q (%v)", host, got, err)
			}, func() { dumpHosts(t, stateDir, ns, from) })
		}
		eventually(t, 15*time.Second, func() (bool, string) {
			got, err := tryGet("http://" + from + ":8080/peer?host=echo")
			return err == nil && strings.HasPrefix(got, "echo-"), fmt.Sprintf("service name echo answered %q (%v)", got, err)
		}, func() { dumpHosts(t, stateDir, ns, from) })
	})

	t.Run("a name missing from the hosts file fails fast", func(t *testing.T) {
		begin := time.Now()
		got, err := tryGet("http://" + pods["echo-0"].Status.PodIP + ":8080/peer?host=missing.echo." + ns + ".svc")
		// No DNS server answers in a pod: the query to its own loopback is refused at once.
		if err != nil || !strings.Contains(got, "lookup missing.echo."+ns+".svc") {
			t.Fatalf("lookup of a missing name answered %q (%v), want a failed lookup", got, err)
		}
		if d := time.Since(begin); d > 3*time.Second {
			t.Fatalf("lookup of a missing name took %s: the pod's resolver waits for an unreachable DNS server", d)
		}
	})

	t.Run("env, downward API and projected token", func(t *testing.T) {
		ip := pods["echo-0"].Status.PodIP
		if got := httpGet(t, "http://"+ip+":8080/env?name=POD_NAME"); got != "echo-0" {
			t.Fatalf("POD_NAME = %q", got)
		}
		if got := httpGet(t, "http://"+ip+":8080/env?name=GREETING"); got != "hello echo-0" {
			t.Fatalf("$(VAR) expansion: GREETING = %q", got)
		}
		if got := httpGet(t, "http://"+ip+":8080/env?name=KUBERNETES_SERVICE_HOST"); got != seed.BridgeIP() {
			t.Fatalf("KUBERNETES_SERVICE_HOST = %q", got)
		}
		if got := httpGet(t, "http://"+ip+":8080/file?path=/var/run/secrets/kubernetes.io/serviceaccount/namespace"); got != ns {
			t.Fatalf("projected namespace = %q", got)
		}
		if got := httpGet(t, "http://"+ip+":8080/file?path=/var/run/secrets/kubernetes.io/serviceaccount/token"); len(got) < 100 {
			t.Fatalf("projected token = %q", got)
		}
	})

	t.Run("readiness probe failure makes the pod NotReady", func(t *testing.T) {
		ip := pods["echo-1"].Status.PodIP
		httpGet(t, "http://"+ip+":8080/unready")
		waitForPod(ctx, t, client, ns, "echo-1", func(p *corev1.Pod) bool { return !isReady(p) })
		httpGet(t, "http://"+ip+":8080/ready")
		waitForPod(ctx, t, client, ns, "echo-1", isReady)
	})

	t.Run("container exit restarts it with restartCount incremented", func(t *testing.T) {
		httpGet(t, "http://"+pods["echo-2"].Status.PodIP+":8080/exit")
		p := waitForPod(ctx, t, client, ns, "echo-2", func(p *corev1.Pod) bool {
			return isReady(p) && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
		})
		last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
		if last == nil || last.ExitCode != 3 {
			t.Fatalf("last termination state %+v, want exit code 3", last)
		}
	})

	t.Run("graceful deletion and data surviving the pod", func(t *testing.T) {
		checkDataSurvivesPodDeletion(ctx, t, client, ns, pods["echo-0"])
	})

	t.Run("unknown image", func(t *testing.T) {
		checkUnknownImage(ctx, t, client, ns, "does-not-exist:1", "ErrImagePull")
	})

	stopAndCheckNothingLeft(ctx, t, seed, &stopped)
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
// replacement is Ready soon, reads the value back, and that the old one was stopped with SIGTERM.
func checkDataSurvivesPodDeletion(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, old *corev1.Pod) {
	t.Helper()
	httpGet(t, "http://"+old.Status.PodIP+":8080/write?v=persisted")
	if err := client.CoreV1().Pods(ns).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recreated := time.Now()
	p := waitForPod(ctx, t, client, ns, old.Name, func(p *corev1.Pod) bool { return p.UID != old.UID && isReady(p) })
	took := time.Since(recreated)
	t.Logf("DURATION deleted pod replaced and Ready: %s (address %s, before %s)", took.Round(time.Millisecond), p.Status.PodIP, old.Status.PodIP)
	// About a second normally; a stale neighbour entry for a reused address once made it 26-59 s.
	if took > 15*time.Second {
		t.Errorf("replacing a deleted pod took %s", took)
	}
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
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "GREETING", Value: "hello $(POD_NAME)"},
					{Name: "EXIT_CODE", Value: "3"},
				},
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
				localseedtest.LogTails(t, podLogDir, 2000)
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
			localseedtest.LogTails(t, podLogDir, 2000)
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

// dumpHosts logs a pod's hosts file as the node wrote it and as the container sees it.
func dumpHosts(t *testing.T, stateDir, ns, podIP string) {
	hosts, _ := filepath.Glob(filepath.Join(stateDir, "nodes", "*", "pods", ns+"_*", "hosts"))
	for _, h := range hosts {
		data, _ := os.ReadFile(h)
		t.Logf("%s:\n%s", h, data)
	}
	got, err := tryGet("http://" + podIP + ":8080/file?path=/etc/hosts")
	t.Logf("/etc/hosts as %s sees it (%v):\n%s", podIP, err, got)
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
