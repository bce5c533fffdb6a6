package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/oci"
)

// The example Kubernetes manifests, checked here against the code so that
// a renamed flag, a moved port or a longer drain cannot leave them wrong.
const deployDir = "../../deploy/kubernetes"

// TestDeployManifests: every manifest in deploy/kubernetes parses, is of
// a kind we expect, and agrees with vulnd (checkDeploy lists how).
func TestDeployManifests(t *testing.T) {
	problems := checkDeploy(deployDir)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestDeployChecksFail: each check of checkDeploy finds the mistake it is
// there for, in a copy of the manifests broken in one place.
func TestDeployChecksFail(t *testing.T) {
	for _, tc := range []struct {
		file, old, new string
		want           string // in one of the problems
	}{
		// (a) parsing, kinds and API versions
		{"vulnd.yaml", "  replicas: 3\n", "  replicas: [3\n", "vulnd.yaml: yaml:"},
		{"vulnd.yaml", "apiVersion: apps/v1\nkind: Deployment", "apiVersion: apps/v1beta1\nkind: Deployment", "apiVersion apps/v1beta1 for a Deployment"},
		{"refresh.yaml", "kind: CronJob", "kind: CronJobs", `unexpected kind "CronJobs"`},
		// (b) every vulnd command line: its command and every flag exist
		{"vulnd.yaml", "- -pull-every=5m", "- -poll-every=5m", "vulnd serve has no flag -poll-every"},
		{"vulnd.yaml", `command: ["/usr/local/bin/vulnd", "serve"]`, `command: ["/usr/local/bin/vulnd", "server"]`, `unknown command "server"`},
		{"refresh.yaml", "-also-tag latest", "-also-tags latest", "vulnd publish has no flag -also-tags"},
		{"refresh.yaml", "vulnd validate current.next", "vulnd validate -o current.next", "vulnd validate has no flag -o"},
		{"refresh.yaml", "vulnd fetch -dir feeds", "vulnd fetch-all -dir feeds", `unknown command "fetch-all"`},
		{"refresh.yaml", "zip -o current.next $epss $feeds\n", "zip -o current.next $epss $feeds -force\n", "flag -force after the arguments"},
		{"refresh.yaml", "vulnd fetch -dir feeds", "vulnd fetch -dir", "flag -dir needs a value"},
		// (c) probes on the admin port, the Service on the API port
		{"vulnd.yaml", "- -admin-addr=:9090", "- -admin-addr=:9091", "readinessProbe: port admin is 9090, but -admin-addr listens on 9091"},
		{"vulnd.yaml", "path: /readyz\n              port: admin", "path: /readyz\n              port: 9091", "readinessProbe: port 9091 is not the port of -admin-addr, 9090"},
		{"vulnd.yaml", "path: /readyz\n              port: admin", "path: /readyz\n              port: metrics", `readinessProbe: no container port named "metrics"`},
		{"vulnd.yaml", "- -addr=:8080", "- -addr=:8081", "targetPort http is 8080, but -addr listens on 8081"},
		{"vulnd.yaml", "targetPort: http", "targetPort: admin", "targetPort admin is 9090, but -addr listens on 8080"},
		{"vulnd.yaml", "- -addr=:8080", "- -addr=127.0.0.1:8080", "-addr 127.0.0.1:8080 listens on loopback only"},
		{"vulnd.yaml", "            - -admin-addr=:9090\n", "", "no -admin-addr"},
		{"vulnd.yaml", "path: /readyz", "path: /healthz", "readinessProbe: /healthz answers 200 while vulnd drains"},
		{"vulnd.yaml", "path: /healthz\n              port: admin\n            periodSeconds: 10", "path: /readyz\n              port: admin\n            periodSeconds: 10", "livenessProbe: /readyz answers 503 while vulnd drains"},
		{"vulnd.yaml", "path: /healthz\n              port: admin\n            periodSeconds: 2", "path: /health\n              port: admin\n            periodSeconds: 2", "startupProbe: /health answers 404"},
		{"vulnd.yaml", `prometheus.io/port: "9090"`, `prometheus.io/port: "8080"`, "prometheus.io/port 8080 is not the port of -admin-addr"},
		{"vulnd.yaml", "    app.kubernetes.io/component: server\n  ports:", "    app.kubernetes.io/component: serve\n  ports:", "Service vulnd: its selector matches no Deployment's pods"},
		// (d) the grace period covers the drain
		{"vulnd.yaml", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 35", "terminationGracePeriodSeconds 35 is not more than -drain-wait 5s + -drain-timeout 30s"},
		{"vulnd.yaml", "- -log-format=json\n", "- -log-format=json\n            - -drain-timeout=1m\n", "terminationGracePeriodSeconds 45 is not more than -drain-wait 5s + -drain-timeout 1m0s"},
		// memory, security, credentials
		{"vulnd.yaml", "value: 3500MiB", "value: 4GiB", "GOMEMLIMIT 4GiB is not below the memory limit 4Gi"},
		{"vulnd.yaml", "value: 3500MiB", "value: 3.5GiB", "GOMEMLIMIT 3.5GiB:"},
		{"vulnd.yaml", "            limits:\n              memory: 4Gi\n", "", "container vulnd: no memory limit"},
		{"vulnd.yaml", "mountPath: /var/lib/vulnd\n", "mountPath: /var/lib/vulnd-data\n", "-snapshot /var/lib/vulnd/snapshot: /var/lib/vulnd is on no writable volume"},
		{"vulnd.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "container vulnd: readOnlyRootFilesystem is not true"},
		{"vulnd.yaml", "        runAsNonRoot: true\n", "", "container vulnd: runAsNonRoot is not true"},
		{"vulnd.yaml", "- name: VULND_REGISTRY_PASSWORD", "- name: VULND_REGISTRY_PASS", "VULND_REGISTRY_PASS is not a variable vulnd reads"},
		{"refresh.yaml", "key: password\n", "key: password\n                - name: VULND_REGISTRY_TOKEN\n                  value: x\n", "VULND_REGISTRY_TOKEN is not a variable vulnd reads"},
		// the refresh CronJob
		{"refresh.yaml", "concurrencyPolicy: Forbid", "concurrencyPolicy: Allow", "concurrencyPolicy is Allow, not Forbid"},
		{"refresh.yaml", "                  set -eu\n", "", "the script does not begin with set -e"},
		{"refresh.yaml", "-previous current ", "", "no vulnd build -previous"},
		{"refresh.yaml", "vulnd validate current.next", "vulnd validate current", "validates current, but vulnd build -o writes current.next"},
		{"refresh.yaml", "-also-tag latest current.next", "-also-tag latest current", "publishes current, but vulnd build -o writes current.next"},
		{"refresh.yaml", "                  vulnd validate current.next\n", "", "the script has no vulnd validate"},
		{"refresh.yaml", "                  vulnd validate current.next\n", "                  vulnd publish -to oci://registry.example.com/vulnd/snapshots:x current.next\n                  vulnd validate current.next\n", "the script runs vulnd publish before vulnd validate"},
		{"refresh.yaml", "snapshots:$tag", "snapshot:$tag", "publishes to oci://registry.example.com/vulnd/snapshot, but the replicas pull oci://registry.example.com/vulnd/snapshots"},
		{"refresh.yaml", "-also-tag latest", "-also-tag stable", `sets the tags [$tag stable], not "latest" that the replicas pull`},
		{"refresh.yaml", "claimName: vulnd-refresh", "claimName: vulnd-data", `no PersistentVolumeClaim "vulnd-data"`},
		{"refresh.yaml", "cd /var/lib/vulnd-refresh", "cd /var/lib/vulnd", "the script works in /var/lib/vulnd, which is on no PersistentVolumeClaim"},
		{"refresh.yaml", "                limits:\n                  memory: 7Gi\n", "", "container refresh: no memory limit"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			dir := t.TempDir()
			matches, _ := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
			for _, m := range matches {
				b, err := os.ReadFile(m)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Base(m) == tc.file {
					if n := bytes.Count(b, []byte(tc.old)); n != 1 {
						t.Fatalf("%q is %d times in %s, not once", tc.old, n, tc.file)
					}
					b = bytes.Replace(b, []byte(tc.old), []byte(tc.new), 1)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(m)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems := checkDeploy(dir)
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Errorf("no problem says %q; the problems:\n%s", tc.want, strings.Join(problems, "\n"))
		})
	}
}

// The kinds a manifest may hold, with their API versions.
var deployKinds = map[string]string{
	"Deployment":            "apps/v1",
	"Service":               "v1",
	"PodDisruptionBudget":   "policy/v1",
	"CronJob":               "batch/v1",
	"PersistentVolumeClaim": "v1",
}

// The parts of the Kubernetes objects that checkDeploy looks at.
type (
	k8sObject struct {
		APIVersion string      `yaml:"apiVersion"`
		Kind       string      `yaml:"kind"`
		Metadata   k8sMetadata `yaml:"metadata"`
		Spec       yaml.Node   `yaml:"spec"`
	}
	k8sMetadata struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	k8sSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	k8sPodTemplate struct {
		Metadata k8sMetadata `yaml:"metadata"`
		Spec     k8sPodSpec  `yaml:"spec"`
	}
	k8sDeploymentSpec struct {
		Replicas *int           `yaml:"replicas"`
		Selector k8sSelector    `yaml:"selector"`
		Template k8sPodTemplate `yaml:"template"`
	}
	k8sCronJobSpec struct {
		Schedule          string `yaml:"schedule"`
		ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
		JobTemplate       struct {
			Spec struct {
				Template k8sPodTemplate `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	}
	k8sServiceSpec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	k8sPDBSpec struct {
		Selector k8sSelector `yaml:"selector"`
	}
	k8sSecurityContext struct {
		RunAsNonRoot           *bool `yaml:"runAsNonRoot"`
		ReadOnlyRootFilesystem *bool `yaml:"readOnlyRootFilesystem"`
	}
	k8sPodSpec struct {
		TerminationGracePeriodSeconds *int64             `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               k8sSecurityContext `yaml:"securityContext"`
		InitContainers                []k8sContainer     `yaml:"initContainers"`
		Containers                    []k8sContainer     `yaml:"containers"`
		Volumes                       []struct {
			Name     string `yaml:"name"`
			EmptyDir *struct {
				SizeLimit string `yaml:"sizeLimit"`
			} `yaml:"emptyDir"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
		} `yaml:"volumes"`
	}
	k8sProbe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"`
		} `yaml:"httpGet"`
	}
	k8sEnvVar struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	k8sContainer struct {
		Name    string      `yaml:"name"`
		Image   string      `yaml:"image"`
		Command []string    `yaml:"command"`
		Args    []string    `yaml:"args"`
		Env     []k8sEnvVar `yaml:"env"`
		Ports   []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		StartupProbe   *k8sProbe `yaml:"startupProbe"`
		ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
		LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
		Resources      struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		SecurityContext k8sSecurityContext `yaml:"securityContext"`
		VolumeMounts    []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
	}
)

// deployObject is a manifest's object, decoded.
type deployObject struct {
	file string // base name
	k8sObject
	deployment *k8sDeploymentSpec
	cronJob    *k8sCronJobSpec
	service    *k8sServiceSpec
	pdb        *k8sPDBSpec
}

func (o *deployObject) String() string {
	return fmt.Sprintf("%s: %s %s", o.file, o.Kind, o.Metadata.Name)
}

// podTemplate is the object's pod template, nil for a kind without one.
func (o *deployObject) podTemplate() *k8sPodTemplate {
	switch {
	case o.deployment != nil:
		return &o.deployment.Template
	case o.cronJob != nil:
		return &o.cronJob.JobTemplate.Spec.Template
	}
	return nil
}

// checkDeploy reads every YAML document of dir/*.yaml and returns what is
// wrong with them, one line each:
//
//   - (a) a document that does not parse, has no name, or is not one of
//     deployKinds with its API version; manifests with no Deployment,
//     Service, CronJob or PersistentVolumeClaim;
//   - (b) every vulnd command line of a container (its command and args,
//     or the commands of a sh -c script): the command exists, and every
//     flag is one that command's help lists, given a value if it takes
//     one, and before the arguments;
//   - (c) vulnd serve: -addr and -admin-addr are set and not on loopback;
//     the startup, readiness and liveness probes are httpGet on the port
//     of -admin-addr (by number or container port name), readiness on a
//     path that answers 503 while vulnd drains, liveness and startup on
//     one that answers 200 then (asked of httpapi.Admin); the
//     prometheus.io/port annotation is the admin port; each Service (and
//     PodDisruptionBudget) selects a Deployment's pods, and the Service's
//     targetPort is the port of -addr; named container ports match;
//   - (d) terminationGracePeriodSeconds is more than -drain-wait +
//     -drain-timeout (their defaults from vulnd help serve when not set);
//   - memory and security: every vulnd container has a memory limit (and
//     request), GOMEMLIMIT is set for serve, parses as Go reads it, and is
//     below the limit; runAsNonRoot and readOnlyRootFilesystem; the
//     parent of -snapshot (where pulls are downloaded) is a writable
//     volume; VULND_* variables are ones vulnd reads, the registry
//     credentials both set and taken from a Secret;
//   - the refresh CronJob: concurrencyPolicy Forbid; its script begins
//     with set -e, runs vulnd fetch, build, validate and publish in that
//     order, builds with -previous, validates and publishes what build -o
//     wrote, publishes to the repository the replicas -pull with the tag
//     they pull among the tags it sets, and works in a directory on a
//     PersistentVolumeClaim defined in the manifests.
func checkDeploy(dir string) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	objs := readDeploy(dir, bad)

	counts := map[string]int{}
	for _, o := range objs {
		counts[o.Kind]++
	}
	for _, k := range []string{"Deployment", "Service", "CronJob", "PersistentVolumeClaim"} {
		if counts[k] == 0 {
			bad("%s: no %s", dir, k)
		}
	}

	var serves []*serveCheck
	for _, o := range objs {
		tpl := o.podTemplate()
		if tpl == nil {
			continue
		}
		if o.deployment != nil {
			if !selects(o.deployment.Selector.MatchLabels, tpl.Metadata.Labels) {
				bad("%s: its selector does not match its pod template's labels", o)
			}
		}
		for _, c := range slices.Concat(tpl.Spec.InitContainers, tpl.Spec.Containers) {
			where := fmt.Sprintf("%s: container %s", o, c.Name)
			invs := containerInvocations(where, c, bad)
			if len(invs) == 0 {
				continue
			}
			checkContainerBasics(where, tpl.Spec, c, bad)
			for _, inv := range invs {
				if inv.cmd == "serve" && inv.parsed != nil {
					s := &serveCheck{obj: o, where: where, c: c, inv: inv}
					serves = append(serves, s)
					checkServe(s, bad)
				}
			}
			if o.cronJob != nil {
				checkRefresh(o, where, c, invs, bad)
			}
		}
	}
	if len(serves) == 0 {
		bad("%s: no container runs vulnd serve", dir)
	}

	// The Services and PodDisruptionBudgets select the replicas, and the
	// Service sends to the API port.
	for _, o := range objs {
		var sel map[string]string
		switch {
		case o.service != nil:
			sel = o.service.Selector
		case o.pdb != nil:
			sel = o.pdb.Selector.MatchLabels
		default:
			continue
		}
		var target *serveCheck
		for _, s := range serves {
			if s.obj.deployment != nil && selects(sel, s.obj.deployment.Template.Metadata.Labels) {
				target = s
			}
		}
		if target == nil {
			bad("%s: its selector matches no Deployment's pods", o)
			continue
		}
		if o.service == nil {
			continue
		}
		for _, p := range o.service.Ports {
			tp := p.TargetPort
			if tp == nil {
				tp = p.Port
			}
			n, err := resolvePort(target.c, tp)
			switch {
			case err != nil:
				bad("%s: port %s: targetPort: %v", o, p.Name, err)
			case target.addrPort != 0 && n != target.addrPort:
				bad("%s: port %s: targetPort %v is %d, but -addr listens on %d (%s)", o, p.Name, tp, n, target.addrPort, target.where)
			}
		}
	}

	// The refresh publishes what the replicas pull.
	checkPublishPull(objs, serves, bad)

	// Every claim is defined here.
	claims := map[string]bool{}
	for _, o := range objs {
		if o.Kind == "PersistentVolumeClaim" {
			claims[o.Metadata.Name] = true
		}
	}
	for _, o := range objs {
		if tpl := o.podTemplate(); tpl != nil {
			for _, v := range tpl.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
					bad("%s: volume %s: no PersistentVolumeClaim %q in the manifests", o, v.Name, v.PersistentVolumeClaim.ClaimName)
				}
			}
		}
	}
	return problems
}

// readDeploy parses every document of dir/*.yaml.
func readDeploy(dir string, bad func(string, ...any)) []*deployObject {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		bad("%s: no *.yaml", dir)
	}
	var objs []*deployObject
	for _, f := range files {
		name := filepath.Base(f)
		b, err := os.ReadFile(f)
		if err != nil {
			bad("%v", err)
			continue
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for i := 1; ; i++ {
			o := &deployObject{file: name}
			err := dec.Decode(&o.k8sObject)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				bad("%s: %v", name, err)
				break
			}
			if o.Kind == "" && o.APIVersion == "" && o.Metadata.Name == "" {
				continue // an empty document
			}
			if o.Metadata.Name == "" {
				o.Metadata.Name = fmt.Sprintf("(document %d)", i)
				bad("%s: no metadata.name", o)
			}
			want, ok := deployKinds[o.Kind]
			switch {
			case !ok:
				bad("%s: document %d: unexpected kind %q", name, i, o.Kind)
				continue
			case o.APIVersion != want:
				bad("%s: apiVersion %s for a %s, not %s", o, o.APIVersion, o.Kind, want)
			}
			var spec any
			switch o.Kind {
			case "Deployment":
				o.deployment = new(k8sDeploymentSpec)
				spec = o.deployment
			case "CronJob":
				o.cronJob = new(k8sCronJobSpec)
				spec = o.cronJob
			case "Service":
				o.service = new(k8sServiceSpec)
				spec = o.service
			case "PodDisruptionBudget":
				o.pdb = new(k8sPDBSpec)
				spec = o.pdb
			}
			if spec != nil {
				if err := o.Spec.Decode(spec); err != nil {
					bad("%s: spec: %v", o, err)
					continue
				}
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// selects tells whether the selector sel matches labels; an empty one
// matches nothing here.
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// A vulndInvocation is one vulnd command line of a container.
type vulndInvocation struct {
	where string
	cmd   string
	args  []string
	// parsed is nil when the command does not exist.
	parsed *parsedArgs
}

type parsedArgs struct {
	flags      map[string]string // given, by name; "true" for a bool
	positional []string
}

// containerInvocations returns the vulnd command lines of c: its command
// and args, or each vulnd command of the script of a sh -c. Every one is
// checked against vulnd's flags.
func containerInvocations(where string, c k8sContainer, bad func(string, ...any)) []vulndInvocation {
	argv := slices.Concat(c.Command, c.Args)
	if len(argv) == 0 {
		if strings.Contains(c.Image, "vulnd") {
			bad("%s: no command: spell out the vulnd command line, so that it can be checked", where)
		}
		return nil
	}
	var lines [][]string
	switch path.Base(argv[0]) {
	case "vulnd":
		lines = [][]string{argv}
	case "sh", "ash", "bash", "dash":
		i := slices.IndexFunc(argv[1:], func(a string) bool {
			return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "c")
		})
		if i < 0 || i+2 >= len(argv) {
			bad("%s: %s without -c SCRIPT", where, argv[0])
			return nil
		}
		lines = shellCommands(argv[i+2])
	}
	var invs []vulndInvocation
	for _, words := range lines {
		words = trimShellPrefix(words)
		if len(words) == 0 || path.Base(words[0]) != "vulnd" {
			continue
		}
		inv := vulndInvocation{where: where}
		if len(words) < 2 {
			bad("%s: vulnd without a command", where)
			continue
		}
		inv.cmd, inv.args = words[1], words[2:]
		inv.parsed = parseVulndArgs(inv, bad)
		invs = append(invs, inv)
	}
	return invs
}

var shellAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// trimShellPrefix drops the reserved words and variable assignments
// before a simple command's name.
func trimShellPrefix(words []string) []string {
	for len(words) > 0 {
		switch w := words[0]; {
		case slices.Contains([]string{"if", "then", "else", "elif", "do", "while", "until", "!", "{", "exec", "time"}, w),
			shellAssignment.MatchString(w):
			words = words[1:]
		default:
			return words
		}
	}
	return words
}

// shellCommands splits a shell script into its simple commands, each as
// its words with the quotes removed: enough of the POSIX shell for the
// scripts of the manifests. A command ends at a newline, ;, &, |, ( or ),
// and $( starts one (so the vulnd of x=$(vulnd feeds d) is found); #
// starting a word comments out the rest of the line; a backslash-newline
// joins lines. Inside quotes nothing is split.
func shellCommands(script string) [][]string {
	var (
		cmds   [][]string
		cur    []string
		word   strings.Builder
		inWord bool
	)
	endWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' {
				word.WriteRune(rs[i])
				inWord = true
			}
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			inWord, i = true, j
		case c == '"':
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune("$`\"\\\n", rs[i+1]) {
					i++
				}
				word.WriteRune(rs[i])
			}
			inWord = true
		case c == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			endCmd()
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			endCmd()
			i++
		case strings.ContainsRune(";&|()\n", c):
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// A vulndFlag is one flag of a vulnd command, as vulnd help COMMAND lists it.
type vulndFlag struct {
	value bool   // takes a value (is not a bool)
	def   string // its default, "" if none is shown
}

var vulndFlagsCache = map[string]map[string]vulndFlag{}

// Flag lines of vulnd help: "  -name", "  -name TYPE" or, for a one-letter
// flag, "  -x\tusage".
var helpFlagLine = regexp.MustCompile(`^  -([^\s=]+)(?: (\S+))?(?:\t.*)?$`)

// The end of a flag's usage in vulnd help: " (default 5s)".
var helpDefault = regexp.MustCompile(`\(default (.*)\)$`)

// vulndFlags returns the flags of vulnd cmd from what vulnd help cmd
// prints, nil if there is no such command.
func vulndFlags(cmd string) map[string]vulndFlag {
	if f, ok := vulndFlagsCache[cmd]; ok {
		return f
	}
	if _, ok := commands[cmd]; !ok {
		return nil
	}
	var out, errb bytes.Buffer
	if code := run([]string{"help", cmd}, &out, &errb); code != 0 {
		panic(fmt.Sprintf("vulnd help %s: exit %d: %s", cmd, code, errb.String()))
	}
	flags := map[string]vulndFlag{}
	_, list, _ := strings.Cut(out.String(), "\nFlags:\n")
	var last string
	for _, line := range strings.Split(list, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			last = m[1]
			flags[last] = vulndFlag{value: m[2] != ""}
		}
		if d := helpDefault.FindStringSubmatch(line); d != nil && last != "" {
			f := flags[last]
			f.def = d[1]
			if s, err := strconv.Unquote(d[1]); err == nil {
				f.def = s
			}
			flags[last] = f
		}
	}
	vulndFlagsCache[cmd] = flags
	return flags
}

// parseVulndArgs parses inv's arguments as vulnd's flag package would,
// reporting unknown flags, missing values and flags after the arguments.
func parseVulndArgs(inv vulndInvocation, bad func(string, ...any)) *parsedArgs {
	flags := vulndFlags(inv.cmd)
	if flags == nil {
		bad("%s: vulnd %s: unknown command %q (vulnd help lists them)", inv.where, inv.cmd, inv.cmd)
		return nil
	}
	p := &parsedArgs{flags: map[string]string{}}
	i := 0
	for ; i < len(inv.args); i++ {
		a := inv.args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f, ok := flags[name]
		switch {
		case !ok:
			bad("%s: vulnd %s has no flag -%s (vulnd help %s)", inv.where, inv.cmd, name, inv.cmd)
		case f.value && !hasVal:
			if i+1 >= len(inv.args) {
				bad("%s: vulnd %s: flag -%s needs a value", inv.where, inv.cmd, name)
				break
			}
			i++
			val = inv.args[i]
		case !f.value && !hasVal:
			val = "true"
		}
		p.flags[name] = val
	}
	p.positional = inv.args[i:]
	for _, a := range p.positional {
		if len(a) > 1 && a[0] == '-' {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if _, ok := flags[name]; ok {
				bad("%s: vulnd %s: flag %s after the arguments %v: flags go first", inv.where, inv.cmd, a, p.positional)
			} else {
				bad("%s: vulnd %s has no flag -%s (vulnd help %s)", inv.where, inv.cmd, name, inv.cmd)
			}
		}
	}
	return p
}

// get returns flag name's value as given, else its default.
func (p *parsedArgs) get(cmd, name string) string {
	if v, ok := p.flags[name]; ok {
		return v
	}
	return vulndFlags(cmd)[name].def
}

// checkContainerBasics checks what every container running vulnd needs:
// a memory request and limit, GOMEMLIMIT (if set) below the limit, no
// root, a read-only root file system, and the registry credentials
// from a Secret.
func checkContainerBasics(where string, pod k8sPodSpec, c k8sContainer, bad func(string, ...any)) {
	limit, err := parseQuantity(c.Resources.Limits["memory"])
	if err != nil {
		bad("%s: no memory limit (%v)", where, err)
	}
	if _, err := parseQuantity(c.Resources.Requests["memory"]); err != nil {
		bad("%s: no memory request (%v)", where, err)
	}
	nonRoot := c.SecurityContext.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = pod.SecurityContext.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		bad("%s: runAsNonRoot is not true", where)
	}
	if ro := c.SecurityContext.ReadOnlyRootFilesystem; ro == nil || !*ro {
		bad("%s: readOnlyRootFilesystem is not true", where)
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
		switch {
		case e.Name == "GOMEMLIMIT":
			n, err := parseGoMemLimit(e.Value)
			switch {
			case err != nil:
				bad("%s: GOMEMLIMIT %s: %v", where, e.Value, err)
			case limit > 0 && n >= limit:
				bad("%s: GOMEMLIMIT %s is not below the memory limit %s", where, e.Value, c.Resources.Limits["memory"])
			}
		case e.Name == oci.EnvUsername || e.Name == oci.EnvPassword:
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				bad("%s: %s is not taken from a Secret (valueFrom.secretKeyRef)", where, e.Name)
			}
		case strings.HasPrefix(e.Name, "VULND_"):
			bad("%s: %s is not a variable vulnd reads (%s, %s)", where, e.Name, oci.EnvUsername, oci.EnvPassword)
		}
	}
	if env[oci.EnvUsername] != env[oci.EnvPassword] {
		bad("%s: only one of %s and %s is set; vulnd needs both", where, oci.EnvUsername, oci.EnvPassword)
	}
}

// serveCheck is one vulnd serve of a container.
type serveCheck struct {
	obj      *deployObject
	where    string
	c        k8sContainer
	inv      vulndInvocation
	addrPort int // the port of -addr, 0 if unknown
}

// checkServe checks a vulnd serve command line against its pod: ports,
// probes, drain, memory, the snapshot's volume.
func checkServe(s *serveCheck, bad func(string, ...any)) {
	p, where := s.inv.parsed, s.where
	pod := s.obj.podTemplate()
	listen := func(flag string) int {
		v := p.get("serve", flag)
		if v == "" {
			bad("%s: no -%s: the probes and the Service need it", where, flag)
			return 0
		}
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			bad("%s: -%s %s: %v", where, flag, v, err)
			return 0
		}
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			bad("%s: -%s %s listens on loopback only: the kubelet and the Service cannot reach it", where, flag, v)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			bad("%s: -%s %s: port %q is not a number", where, flag, v, port)
		}
		return n
	}
	s.addrPort = listen("addr")
	admin := listen("admin-addr")

	// Named container ports are the ports vulnd listens on.
	for _, cp := range s.c.Ports {
		switch cp.Name {
		case "http", "api":
			if s.addrPort != 0 && cp.ContainerPort != s.addrPort {
				bad("%s: container port %s is %d, but -addr listens on %d", where, cp.Name, cp.ContainerPort, s.addrPort)
			}
		case "admin", "metrics":
			if admin != 0 && cp.ContainerPort != admin {
				bad("%s: container port %s is %d, but -admin-addr listens on %d", where, cp.Name, cp.ContainerPort, admin)
			}
		}
	}

	// The probes: on the admin port, on paths that answer as they must.
	adminHandler := httpapi.Admin(func() *index.Index { return nil }, func() bool { return false },
		httpapi.AdminOptions{Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})})
	status := func(p string) int {
		rec := httptest.NewRecorder()
		adminHandler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		return rec.Code
	}
	for _, pr := range []struct {
		name  string
		probe *k8sProbe
		want  int // while vulnd drains (or has no snapshot yet)
	}{
		{"startupProbe", s.c.StartupProbe, http.StatusOK},
		{"readinessProbe", s.c.ReadinessProbe, http.StatusServiceUnavailable},
		{"livenessProbe", s.c.LivenessProbe, http.StatusOK},
	} {
		switch {
		case pr.probe == nil && pr.name == "startupProbe":
			continue
		case pr.probe == nil:
			bad("%s: no %s", where, pr.name)
			continue
		case pr.probe.HTTPGet == nil:
			bad("%s: %s is not an httpGet", where, pr.name)
			continue
		}
		g := pr.probe.HTTPGet
		n, err := resolvePort(s.c, g.Port)
		switch {
		case err != nil:
			bad("%s: %s: %v", where, pr.name, err)
		case admin != 0 && n != admin && fmt.Sprint(g.Port) != strconv.Itoa(n):
			bad("%s: %s: port %v is %d, but -admin-addr listens on %d", where, pr.name, g.Port, n, admin)
		case admin != 0 && n != admin:
			bad("%s: %s: port %d is not the port of -admin-addr, %d", where, pr.name, n, admin)
		}
		if got := status(g.Path); got != pr.want {
			bad("%s: %s: %s answers %d while vulnd drains, not %d (httpapi.Admin)", where, pr.name, g.Path, got, pr.want)
		}
	}
	if v, ok := pod.Metadata.Annotations["prometheus.io/port"]; ok && v != strconv.Itoa(admin) {
		bad("%s: annotation prometheus.io/port %s is not the port of -admin-addr, %d", where, v, admin)
	}
	if v, ok := pod.Metadata.Annotations["prometheus.io/path"]; ok && status(v) == http.StatusNotFound {
		bad("%s: annotation prometheus.io/path %s answers 404 on the admin listener", where, v)
	}

	// (d) The grace period covers the drain.
	wait, err1 := time.ParseDuration(p.get("serve", "drain-wait"))
	timeout, err2 := time.ParseDuration(p.get("serve", "drain-timeout"))
	grace := pod.Spec.TerminationGracePeriodSeconds
	switch {
	case err1 != nil || err2 != nil:
		bad("%s: -drain-wait or -drain-timeout: %v", where, errors.Join(err1, err2))
	case grace == nil:
		bad("%s: no terminationGracePeriodSeconds (Kubernetes' 30 s is not more than -drain-wait %v + -drain-timeout %v)", s.obj, wait, timeout)
	case time.Duration(*grace)*time.Second <= wait+timeout:
		bad("%s: terminationGracePeriodSeconds %d is not more than -drain-wait %v + -drain-timeout %v", s.obj, *grace, wait, timeout)
	}

	// GOMEMLIMIT: the index is most of the heap; without a limit the heap
	// grows to twice it.
	if !slices.ContainsFunc(s.c.Env, func(e k8sEnvVar) bool { return e.Name == "GOMEMLIMIT" }) {
		bad("%s: no GOMEMLIMIT", where)
	}

	// The snapshot's parent directory is a writable volume: -pull
	// downloads beside it and renames into it.
	snap := p.get("serve", "snapshot")
	if snap == "" {
		bad("%s: no -snapshot", where)
		return
	}
	parent := path.Dir(path.Clean(snap))
	if p.get("serve", "pull") != "" && !onWritableVolume(s.c, pod.Spec, parent, false) {
		bad("%s: -snapshot %s: %s is on no writable volume, and -pull writes there", where, snap, parent)
	}
}

// onWritableVolume tells whether dir is on a volume mounted writable in
// c (only a PersistentVolumeClaim if pvc).
func onWritableVolume(c k8sContainer, pod k8sPodSpec, dir string, pvc bool) bool {
	for _, m := range c.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, dir)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || m.ReadOnly {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && (!pvc || v.PersistentVolumeClaim != nil) {
				return true
			}
		}
	}
	return false
}

// resolvePort returns the number of port, a number or the name of one of
// c's ports.
func resolvePort(c k8sContainer, port any) (int, error) {
	switch p := port.(type) {
	case int:
		return p, nil
	case string:
		if n, err := strconv.Atoi(p); err == nil {
			return n, nil
		}
		for _, cp := range c.Ports {
			if cp.Name == p {
				return cp.ContainerPort, nil
			}
		}
		return 0, fmt.Errorf("no container port named %q in container %s", p, c.Name)
	}
	return 0, fmt.Errorf("port %v is neither a number nor a name", port)
}

// checkRefresh checks the refresh CronJob's container and script.
func checkRefresh(o *deployObject, where string, c k8sContainer, invs []vulndInvocation, bad func(string, ...any)) {
	if o.cronJob.ConcurrencyPolicy != "Forbid" {
		policy := o.cronJob.ConcurrencyPolicy
		if policy == "" {
			policy = "Allow (the default)"
		}
		bad("%s: concurrencyPolicy is %s, not Forbid: two refreshes would share the feeds", o, policy)
	}
	argv := slices.Concat(c.Command, c.Args)
	script := argv[len(argv)-1]
	cmds := shellCommands(script)
	if len(cmds) == 0 || cmds[0][0] != "set" || !slices.ContainsFunc(cmds[0][1:], func(a string) bool {
		return strings.HasPrefix(a, "-") && strings.Contains(a, "e")
	}) {
		bad("%s: the script does not begin with set -e: a failed step would not stop it", where)
	}
	// The steps, in order.
	first := map[string]int{}
	for i, inv := range invs {
		if _, ok := first[inv.cmd]; !ok {
			first[inv.cmd] = i
		}
	}
	last, lastStep := -1, ""
	for _, step := range []string{"fetch", "build", "validate", "publish"} {
		i, ok := first[step]
		switch {
		case !ok:
			bad("%s: the script has no vulnd %s", where, step)
		case i < last:
			bad("%s: the script runs vulnd %s before vulnd %s", where, step, lastStep)
		default:
			last, lastStep = i, step
		}
	}
	// build -previous, and what build writes is validated and published.
	var out string
	previous := false
	for _, inv := range invs {
		if inv.parsed == nil {
			continue
		}
		switch inv.cmd {
		case "build":
			if inv.parsed.flags["previous"] != "" {
				previous = true
			}
			if dir := inv.parsed.flags["o"]; out == "" {
				out = dir
			} else if dir != out {
				bad("%s: vulnd build writes %s here and %s there", where, out, dir)
			}
		case "validate", "publish":
			if out != "" && !slices.Equal(inv.parsed.positional, []string{out}) {
				verb := map[string]string{"validate": "validates", "publish": "publishes"}[inv.cmd]
				bad("%s: the script %s %s, but vulnd build -o writes %s", where, verb, strings.Join(inv.parsed.positional, " "), out)
			}
		}
	}
	if !previous {
		bad("%s: no vulnd build -previous: the snapshots would have no report of what changed", where)
	}
	// It works on the claim.
	for _, cmd := range cmds {
		if len(cmd) == 2 && cmd[0] == "cd" && path.IsAbs(cmd[1]) {
			if !onWritableVolume(c, o.cronJob.JobTemplate.Spec.Template.Spec, cmd[1], true) {
				bad("%s: the script works in %s, which is on no PersistentVolumeClaim: the feeds and the previous snapshot would be lost", where, cmd[1])
			}
		}
	}
}

// checkPublishPull checks that every vulnd publish pushes to the
// repository every vulnd serve -pull follows, with the tag it pulls.
func checkPublishPull(objs []*deployObject, serves []*serveCheck, bad func(string, ...any)) {
	repoTag := func(ref string) (string, string, error) {
		// A shell variable in the tag ($tag, ${tag}) stands for some tag.
		r, err := oci.ParseRef(regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`).ReplaceAllString(ref, "x"))
		if err != nil {
			return "", "", err
		}
		i := strings.LastIndex(ref, ":")
		return strings.TrimSuffix(r.String(), ":"+r.Reference()), ref[i+1:], nil
	}
	for _, o := range objs {
		tpl := o.podTemplate()
		if o.cronJob == nil || tpl == nil {
			continue
		}
		for _, c := range tpl.Spec.Containers {
			where := fmt.Sprintf("%s: container %s", o, c.Name)
			for _, inv := range containerInvocations(where, c, func(string, ...any) {}) {
				if inv.cmd != "publish" || inv.parsed == nil {
					continue
				}
				to := inv.parsed.get("publish", "to")
				repo, tag, err := repoTag(to)
				if err != nil {
					bad("%s: vulnd publish -to %s: %v", where, to, err)
					continue
				}
				tags := []string{tag}
				if also := inv.parsed.get("publish", "also-tag"); also != "" {
					tags = append(tags, strings.Split(also, ",")...)
				}
				for _, s := range serves {
					pull := s.inv.parsed.get("serve", "pull")
					if pull == "" {
						bad("%s: vulnd serve has no -pull", s.where)
						continue
					}
					prepo, ptag, err := repoTag(pull)
					switch {
					case err != nil:
						bad("%s: vulnd serve -pull %s: %v", s.where, pull, err)
					case prepo != repo:
						bad("%s: the script publishes to %s, but the replicas pull %s (%s)", where, repo, prepo, s.where)
					case !slices.Contains(tags, ptag):
						bad("%s: the script sets the tags %v, not %q that the replicas pull (%s)", where, tags, ptag, s.where)
					}
				}
			}
		}
	}
}

// parseQuantity parses a Kubernetes quantity of bytes: 3Gi, 512Mi, 5G, 1e9.
func parseQuantity(q string) (int64, error) {
	if q == "" {
		return 0, errors.New("none given")
	}
	mult := map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
		"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "": 1}
	m := regexp.MustCompile(`^([0-9.]+(?:[eE][0-9]+)?)([A-Za-z]*)$`).FindStringSubmatch(q)
	if m == nil {
		return 0, fmt.Errorf("quantity %q does not parse", q)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	k, ok := mult[m[2]]
	if err != nil || !ok {
		return 0, fmt.Errorf("quantity %q does not parse", q)
	}
	return int64(f * k), nil
}

// parseGoMemLimit parses GOMEMLIMIT as the Go runtime does: an integer
// and an optional unit, B, KiB, MiB, GiB or TiB.
func parseGoMemLimit(s string) (int64, error) {
	m := regexp.MustCompile(`^([0-9]+)(B|KiB|MiB|GiB|TiB)?$`).FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("not what the Go runtime reads (an integer and B, KiB, MiB, GiB or TiB): it would ignore it")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	shift := map[string]int{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[m[2]]
	return n << shift, nil
}
