package localseed

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// TestNetworkPolicies: with Options.NetworkPolicies the nodes enforce NetworkPolicies. A server pod is
// reached by two client pods in another namespace, one on the server's node and one on the other node;
// a default-deny ingress policy in the server's namespace cuts both off, and a policy that allows the
// clients' namespace and label lets exactly the labelled one through again. Stop leaves nothing behind.
func TestNetworkPolicies(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	localseedtest.SkipUnlessNodeTools(t, append(NodeTools, kubeletnode.NetworkPolicyAgent))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	seed, err := Start(ctx, Options{Nodes: 2, NetworkPolicies: true, StateDir: filepath.Join(t.TempDir(), "state"),
		Log: testr.NewWithOptions(t, testr.Options{Verbosity: 0})})
	if err != nil {
		t.Fatalf("starting seed: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = seed.Stop(context.Background())
		}
	})
	stateDir := seed.StateDir()
	defer func() {
		if t.Failed() {
			for _, node := range seed.NodeNames() {
				localseedtest.LogTails(t, filepath.Join(stateDir, "nodes", node, "logs"), 3000)
			}
		}
	}()
	client := kubernetes.NewForConfigOrDie(seed.RESTConfig())
	image, err := seed.PushImage(ctx, "../..", imagebuild.Binary{Name: "httpecho", Package: "./pkg/localseed/testdata/httpecho"})
	if err != nil {
		t.Fatalf("pushing the test image: %v", err)
	}

	nodes := seed.NodeNames()
	serverNS, clientNS := "np-server", "np-client"
	server := startEchoPod(ctx, t, client, serverNS, "server", nodes[0], map[string]string{"app": "server"}, image)
	clients := map[string]*corev1.Pod{
		"allowed": startEchoPod(ctx, t, client, clientNS, "allowed", nodes[1], map[string]string{"role": "client"}, image),
		"other":   startEchoPod(ctx, t, client, clientNS, "other", nodes[0], map[string]string{"role": "other"}, image),
	}
	// reaches asks client to fetch the server's port 8080; the server answers with its name.
	reaches := func(from *corev1.Pod) (bool, string) {
		got, err := tryGet("http://" + from.Status.PodIP + ":8080/peer?host=" + server.Status.PodIP)
		if err != nil { // the host cannot reach the client: nothing is known about the server
			t.Fatalf("client %s: %v", from.Name, err)
		}
		return got == "server", from.Name + " got " + strings.TrimSpace(got)
	}
	expect := func(from *corev1.Pod, want bool) func() (bool, string) {
		return func() (bool, string) {
			ok, msg := reaches(from)
			return ok == want, msg
		}
	}
	noDump := func() {}

	t.Run("without a policy every client reaches the server", func(t *testing.T) {
		for _, c := range clients {
			eventually(t, time.Minute, expect(c, true), noDump)
		}
	})

	t.Run("a default-deny ingress policy cuts every client off", func(t *testing.T) {
		created := time.Now()
		createPolicy(ctx, t, client, &networkingv1.NetworkPolicy{
			// Not "deny-all": with Options.NetworkPolicies Gardener's seed controller runs, which owns that name
			// and deletes it in namespaces that are none of Gardener's (as on a real seed).
			ObjectMeta: metav1.ObjectMeta{Name: "default-deny", Namespace: serverNS},
			Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		})
		for _, c := range clients {
			eventually(t, time.Minute, expect(c, false), noDump)
		}
		t.Logf("FIGURE default-deny enforced for both clients %s after the policy was created", time.Since(created).Round(time.Millisecond))
	})

	t.Run("an allow policy by namespace and pod labels lets exactly the labelled client through", func(t *testing.T) {
		created := time.Now()
		port := intstr.FromInt32(8080)
		createPolicy(ctx, t, client, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "allow-clients", Namespace: serverNS},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From: []networkingv1.NetworkPolicyPeer{{
						NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": clientNS}},
						PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}},
					}},
					Ports: []networkingv1.NetworkPolicyPort{{Port: &port}},
				}},
			},
		})
		eventually(t, time.Minute, expect(clients["allowed"], true), noDump)
		t.Logf("FIGURE allow policy effective %s after it was created", time.Since(created).Round(time.Millisecond))
		if ok, msg := reaches(clients["other"]); ok {
			t.Errorf("the client without the label reaches the server: %s", msg)
		}
	})

	logAgentUsage(t, stateDir)
	stopAndCheckNothingLeft(ctx, t, seed, &stopped)
}

// startEchoPod runs the test image as pod name on node, in namespace ns (created if missing), and waits
// until it is Ready.
func startEchoPod(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name, node string, labels map[string]string, image string) *corev1.Pod {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{
		NodeName: node, TerminationGracePeriodSeconds: ptr.To(int64(5)),
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(65532))},
		Containers: []corev1.Container{{
			Name: "echo", Image: image, SecurityContext: hardened, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1,
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
		}},
	}}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitForPod(ctx, t, client, ns, name, isReady)
}

func createPolicy(ctx context.Context, t *testing.T, client kubernetes.Interface, policy *networkingv1.NetworkPolicy) {
	t.Helper()
	if _, err := client.NetworkingV1().NetworkPolicies(policy.Namespace).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// logAgentUsage logs the CPU time and resident memory of every node's NetworkPolicy agent (a figure, not
// an assertion).
func logAgentUsage(t *testing.T, stateDir string) {
	for _, pid := range processesMentioning(stateDir) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if !strings.Contains(string(cmdline), "/"+kubeletnode.NetworkPolicyAgent+"\x00") {
			continue
		}
		status, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		var rss string
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				rss = strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
			}
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		utime, _ := strconv.Atoi(fields[11])
		stime, _ := strconv.Atoi(fields[12])
		t.Logf("FIGURE agent pid %d: RSS %s, CPU %.2fs (user+system)", pid, rss, float64(utime+stime)/100)
	}
}
