// Package kubernetes holds devctl's Kubernetes manifests; its test decodes
// every manifest strictly into the Kubernetes API types and checks that
// the pods keep to least privilege and pass devctl flags that exist.
package kubernetes

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
)

// decode reads every document of every manifest into its typed object,
// refusing unknown, misspelt or duplicate fields.
func decode(t *testing.T) map[string][]any {
	t.Helper()
	files, _ := filepath.Glob("*.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d manifests", len(files))
	}
	out := map[string][]any{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var obj any
			switch meta.APIVersion + " " + meta.Kind {
			case "v1 Namespace":
				obj = &corev1.Namespace{}
			case "v1 ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "apps/v1 DaemonSet":
				obj = &appsv1.DaemonSet{}
			case "monitoring.coreos.com/v1 ServiceMonitor":
				obj = &monitoringv1.ServiceMonitor{}
			default:
				t.Fatalf("%s document %d: no decoder for %q %q", f, i, meta.APIVersion, meta.Kind)
			}
			// YAML to JSON refusing duplicate keys, then Kubernetes' own
			// strict decoding: unknown fields and case-insensitive matches
			// (readOnlyRootFileSystem) are errors, as for kubectl --validate.
			j, err := yaml.YAMLToJSONStrict(doc)
			if err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, meta.Kind, err)
			}
			strict, err := kjson.UnmarshalStrict(j, obj)
			if err == nil && len(strict) > 0 {
				err = errors.Join(strict...)
			}
			if err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, meta.Kind, err)
			}
			out[meta.Kind] = append(out[meta.Kind], obj)
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decode(t)
	for _, kind := range []string{"Namespace", "ServiceAccount", "Service", "DaemonSet", "ServiceMonitor"} {
		if len(objs[kind]) == 0 {
			t.Errorf("no %s among the manifests", kind)
		}
	}
	if len(objs["DaemonSet"]) != 2 {
		t.Errorf("want the serve DaemonSet and its NFD variant, got %d", len(objs["DaemonSet"]))
	}
}

func TestDaemonSetsKeepLeastPrivilege(t *testing.T) {
	for _, o := range decode(t)["DaemonSet"] {
		ds := o.(*appsv1.DaemonSet)
		spec := ds.Spec.Template.Spec
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s mounts a service-account token it never uses", ds.Name)
		}
		if spec.HostNetwork || spec.HostPID || spec.HostIPC {
			t.Errorf("%s shares a host namespace", ds.Name)
		}
		if ds.Spec.Selector == nil || ds.Spec.Selector.MatchLabels["app.kubernetes.io/component"] != ds.Spec.Template.Labels["app.kubernetes.io/component"] {
			t.Errorf("%s: the selector does not match the pod labels", ds.Name)
		}
		hostPaths := map[string]bool{}
		for _, v := range spec.Volumes {
			if v.HostPath != nil {
				hostPaths[v.Name] = true
			}
		}
		for _, c := range spec.Containers {
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s/%s may escalate privileges", ds.Name, c.Name)
			}
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s/%s has a writable root filesystem", ds.Name, c.Name)
			}
			if sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s/%s keeps capabilities", ds.Name, c.Name)
			}
			if sc != nil && sc.Privileged != nil && *sc.Privileged {
				t.Errorf("%s/%s is privileged", ds.Name, c.Name)
			}
			if c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s has no memory limit", ds.Name, c.Name)
			}
			for _, m := range c.VolumeMounts {
				if !hostPaths[m.Name] || m.ReadOnly {
					continue
				}
				if m.MountPath != "/etc/kubernetes/node-feature-discovery/features.d" {
					t.Errorf("%s/%s mounts host path %s writable", ds.Name, c.Name, m.MountPath)
				}
			}
			if len(c.Command) != 1 || c.Command[0] != "devctl" {
				t.Errorf("%s/%s runs %v, want [devctl]", ds.Name, c.Name, c.Command)
			}
			checkArgs(t, ds.Name, c.Args)
		}
		writable := false
		for _, c := range spec.Containers {
			for _, m := range c.VolumeMounts {
				writable = writable || (hostPaths[m.Name] && !m.ReadOnly)
			}
		}
		if !writable && (spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot) {
			t.Errorf("%s writes nothing on the host, so it must run as non-root", ds.Name)
		}
	}
}

// checkArgs parses a container's arguments with devctl's own command tree:
// a renamed or removed flag fails here, not on a cluster.
func checkArgs(t *testing.T, name string, args []string) {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(factory.New(io, func(string) (string, bool) { return "", false }, "dev"))
	sub, rest, err := cmd.Find(args)
	if err != nil || sub == cmd {
		t.Errorf("%s: %v is not a devctl command: %v", name, args, err)
		return
	}
	if err := sub.ParseFlags(rest); err != nil {
		t.Errorf("%s: devctl %s: %v", name, strings.Join(args, " "), err)
	}
	if sub.Flags().NArg() > 0 {
		t.Errorf("%s: stray arguments %v", name, sub.Flags().Args())
	}
}

func TestServiceMonitorScrapesTheServicePort(t *testing.T) {
	objs := decode(t)
	sm := objs["ServiceMonitor"][0].(*monitoringv1.ServiceMonitor)
	var svc *corev1.Service
	for _, o := range objs["Service"] {
		svc = o.(*corev1.Service)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, which the Service lacks", k, v)
		}
	}
	ports := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = true
	}
	for _, e := range sm.Spec.Endpoints {
		if !ports[e.Port] {
			t.Errorf("the ServiceMonitor scrapes port %q, which the Service does not name", e.Port)
		}
	}
}
