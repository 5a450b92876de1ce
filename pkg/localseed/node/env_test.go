package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestExpand follows the kubelet's rules for $(VAR) in env values, command and args.
func TestExpand(t *testing.T) {
	values := map[string]string{"POD_NAME": "etcd-0", "NS": "shoot", "EMPTY": ""}
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$(POD_NAME)", "etcd-0"},
		{"http://$(POD_NAME).peer.$(NS).svc:2380", "http://etcd-0.peer.shoot.svc:2380"},
		{"[$(EMPTY)]", "[]"},
		{"$(UNDEFINED) stays", "$(UNDEFINED) stays"},
		{"$$(POD_NAME) is escaped", "$(POD_NAME) is escaped"},
		{"cost: $$5", "cost: $5"},
		{"$POD_NAME without parentheses", "$POD_NAME without parentheses"},
		{"unterminated $(POD_NAME", "unterminated $(POD_NAME"},
		{"trailing $", "trailing $"},
		{"$()", "$()"},
	} {
		if got := expand(tc.in, values); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEnvOrder: a variable references only those defined before it, as in the kubelet.
func TestEnvOrder(t *testing.T) {
	w := &podWorker{n: &Node{cfg: Config{APIServerHost: "10.0.0.1", APIServerPort: 6443}}}
	pod := &corev1.Pod{}
	pod.Name = "etcd-0"
	env, values, err := w.containerEnv(t.Context(), pod, corev1.Container{Env: []corev1.EnvVar{
		{Name: "EARLY", Value: "$(LATE)"},
		{Name: "LATE", Value: "late"},
		{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)/$(LATE)"},
		{Name: "NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "GREETING", Value: "hello $(NAME)"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"EARLY": "$(LATE)", "URL": "https://10.0.0.1:6443/late", "GREETING": "hello etcd-0", "HOSTNAME": "etcd-0"} {
		if values[k] != want {
			t.Errorf("%s = %q, want %q", k, values[k], want)
		}
	}
	if len(env) != len(values) {
		t.Errorf("env has %d entries for %d variables", len(env), len(values))
	}
}

// TestCommandLine: $(VAR) in command and args, and the image binary replacing the command's first word.
func TestCommandLine(t *testing.T) {
	values := map[string]string{"POD_NAME": "etcd-0"}
	c := corev1.Container{Command: []string{"/usr/local/bin/etcd-wrapper"}, Args: []string{"--name=$(POD_NAME)"}}
	path, argv := commandLine(c, "/repo/bin/etcd-wrapper", values)
	if path != "/repo/bin/etcd-wrapper" || len(argv) != 2 || argv[1] != "--name=etcd-0" {
		t.Fatalf("commandLine = %s %v", path, argv)
	}
	path, argv = commandLine(corev1.Container{Args: []string{"$(POD_NAME)"}}, "/repo/bin/x", values)
	if path != "/repo/bin/x" || len(argv) != 2 || argv[0] != "/repo/bin/x" || argv[1] != "etcd-0" {
		t.Fatalf("commandLine without command = %s %v", path, argv)
	}
}
