// Package kubernetes checks the worker fleet's manifests against the Kubernetes API types: every
// document decodes strictly (an unknown or misspelt field fails), and the parts the plugin relies on
// are there. Kubernetes cannot run where the tests run; this is what can be checked without it.
package kubernetes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decodeStrict turns one YAML document into obj, refusing fields obj's type does not have.
func decodeStrict(t *testing.T, doc []byte, obj any) {
	t.Helper()
	require.NoError(t, strictErr(doc, obj))
}

// strictErr decodes as the API server's strict field validation does: a field obj's type lacks,
// a field in the wrong case, or one written twice is an error.
func strictErr(doc []byte, obj any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// manifests reads every document of every YAML file here, keyed by "file#index".
func manifests(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			if strings.TrimSpace(stripComments(d)) != "" {
				docs[fmt.Sprintf("%s#%d", f, i)] = []byte(d)
			}
		}
	}
	return docs
}

func stripComments(s string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(s, "")
}

// fleet holds the decoded objects by kind.
type fleet struct {
	sets     []appsv1.StatefulSet
	services []corev1.Service
	secrets  []corev1.Secret
}

func decodeAll(t *testing.T) fleet {
	var f fleet
	for name, doc := range manifests(t) {
		var tm metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal(doc, &tm), name)
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 StatefulSet":
			var s appsv1.StatefulSet
			decodeStrict(t, doc, &s)
			f.sets = append(f.sets, s)
		case "v1 Service":
			var s corev1.Service
			decodeStrict(t, doc, &s)
			f.services = append(f.services, s)
		case "v1 Secret":
			var s corev1.Secret
			decodeStrict(t, doc, &s)
			f.secrets = append(f.secrets, s)
		default:
			t.Fatalf("%s: unexpected kind %q %q", name, tm.APIVersion, tm.Kind)
		}
	}
	return f
}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	f := decodeAll(t)
	require.Len(t, f.sets, 1)
	require.Len(t, f.services, 1)
	require.Len(t, f.secrets, 1)
}

func TestAMisspeltFieldIsRefused(t *testing.T) {
	doc := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIp: None}\n")
	var s corev1.Service
	require.ErrorContains(t, strictErr(doc, &s), "clusterIp")
	doc = []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIP: None, portz: []}\n")
	require.ErrorContains(t, strictErr(doc, &s), "portz")
}

// The plugin addresses each worker by its pod's own name: the Service must be headless and the
// StatefulSet's serviceName must be it, and the Service must select the StatefulSet's pods.
func TestEachWorkerHasAStableName(t *testing.T) {
	f := decodeAll(t)
	set, svc := f.sets[0], f.services[0]
	require.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP)
	require.Equal(t, svc.Name, set.Spec.ServiceName)
	for k, v := range svc.Spec.Selector {
		require.Equal(t, v, set.Spec.Template.Labels[k], "the Service selects the workers' pods")
	}
	require.Equal(t, set.Spec.Selector.MatchLabels, set.Spec.Template.Labels)
}

// The worker is `opencode serve` with its password from the Secret, never written in the manifest;
// its readiness is /global/health asked with that password; an init container clones the repository
// at a ref into the folder OpenCode serves.
func TestTheWorkerIsOpenCodeWithItsPasswordFromTheSecret(t *testing.T) {
	f := decodeAll(t)
	pod := f.sets[0].Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.Equal(t, []string{"opencode", "serve"}, c.Command[:2])
	var pw *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "OPENCODE_SERVER_PASSWORD" {
			pw = &c.Env[i]
		}
	}
	require.NotNil(t, pw, "OPENCODE_SERVER_PASSWORD is set")
	require.Empty(t, pw.Value, "the password is never written in the manifest")
	require.NotNil(t, pw.ValueFrom.SecretKeyRef)
	require.Equal(t, f.secrets[0].Name, pw.ValueFrom.SecretKeyRef.Name)
	require.Contains(t, f.secrets[0].StringData, pw.ValueFrom.SecretKeyRef.Key)

	probe := c.ReadinessProbe
	require.NotNil(t, probe)
	require.NotNil(t, probe.Exec)
	require.Contains(t, strings.Join(probe.Exec.Command, " "), "/global/health")
	require.Contains(t, strings.Join(probe.Exec.Command, " "), "$OPENCODE_SERVER_PASSWORD")

	require.Len(t, pod.InitContainers, 1)
	clone := pod.InitContainers[0]
	require.Contains(t, strings.Join(clone.Args, " "), "$REPO_REF") // what it does: clone_test.go
	var dir string
	for _, e := range clone.Env {
		if e.Name == "REPO_DIR" {
			dir = e.Value
		}
	}
	require.Equal(t, c.WorkingDir, dir, "OpenCode serves the folder the clone is in")
	require.True(t, strings.HasPrefix(c.WorkingDir, clone.VolumeMounts[0].MountPath))

	var port int32
	for _, p := range c.Ports {
		if p.Name == "opencode" {
			port = p.ContainerPort
		}
	}
	require.Equal(t, port, f.services[0].Spec.Ports[0].Port)
	require.Contains(t, strings.Join(c.Command, " "), fmt.Sprintf("--port %d", port))
}
