package localseed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/test/localseedtest"
)

// hardened is the security context every pod of the project runs with; real nodes enforce it.
var hardened = &corev1.SecurityContext{
	RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
	Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
}

// TestRealNodes runs pods on real nodes (kubelet, containerd, runc, CNI, kube-proxy, CoreDNS) from an image
// pushed to the seed's registry, and checks that Stop leaves nothing behind.
func TestRealNodes(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	localseedtest.SkipUnlessRealNodeTools(t, RealNodeTools)
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
	seed, err := Start(ctx, Options{RealNodes: true, Nodes: 2, StateDir: filepath.Join(link, "state"),
		Log: testr.NewWithOptions(t, testr.Options{Verbosity: 0})})
	if err != nil {
		t.Fatalf("starting seed: %v", err)
	}
	t.Logf("DURATION control plane + registry + seed images + 2 real nodes + CoreDNS: %s", time.Since(begin).Round(time.Millisecond))
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

// TestRealNodesRefuseALongStateDir: a state dir whose path leaves no room for the kubelets' unix sockets is
// refused up front, naming the limit, instead of kubelets that fail to bind and nodes that never get Ready.
func TestRealNodesRefuseALongStateDir(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	long := filepath.Join(t.TempDir(), strings.Repeat("d", maxRealNodesStateDir))
	_, err := Start(context.Background(), Options{RealNodes: true, Nodes: 1, StateDir: long, BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "characters long") {
		t.Fatalf("Start with a %d-character state dir: %v", len(long), err)
	}
}
