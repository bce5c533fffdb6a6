package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// TestOperationsAlertRules: the Prometheus rules of docs/OPERATIONS.md
// parse as a rule file (groups of rules, each an alert with an expr, a
// valid for and balanced brackets), name each alert once, and name only
// vulnd_ metrics that vulnd serve registers; among them the data-age
// rule on vulnd_snapshot_stale.
func TestOperationsAlertRules(t *testing.T) {
	doc, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "Alert rules to start from")
	_, block, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`docs/OPERATIONS.md has no yaml block after "Alert rules to start from"`)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(block))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("the rules do not parse: %v", err)
	}

	// The metric names vulnd serve registers, series or not.
	m := &Main{}
	reg := newServeMetrics(m.cur.Load, m.stale).reg
	descs := make(chan *prometheus.Desc, 100)
	go func() { reg.Describe(descs); close(descs) }()
	known := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if s := fq.FindStringSubmatch(d.String()); s != nil {
			known[s[1]] = true
		}
	}
	if !known["vulnd_snapshot_stale"] || !known["vulnd_snapshot_input_timestamp_seconds"] {
		t.Fatalf("registered metrics: %v", known)
	}

	seen := map[string]bool{}
	metricName := regexp.MustCompile(`\bvulnd_[a-z_]+`)
	duration := regexp.MustCompile(`^[0-9]+[smhd]$`)
	for _, g := range file.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: no name or no rules", g.Name)
		}
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" || seen[r.Alert] {
				t.Errorf("rule %q: no alert name, no expr, or a name seen before", r.Alert)
			}
			seen[r.Alert] = true
			if r.For != "" && !duration.MatchString(r.For) {
				t.Errorf("%s: for %q is not a duration", r.Alert, r.For)
			}
			for _, pair := range []string{"()", "[]", "{}"} {
				if strings.Count(r.Expr, pair[:1]) != strings.Count(r.Expr, pair[1:]) {
					t.Errorf("%s: unbalanced %s in %q", r.Alert, pair, r.Expr)
				}
			}
			for _, name := range metricName.FindAllString(r.Expr, -1) {
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && known[b] {
						base = b
					}
				}
				if !known[base] {
					t.Errorf("%s: %s is no metric of vulnd serve", r.Alert, name)
				}
			}
		}
	}
	if !seen["VulndDataOld"] || !strings.Contains(block, "vulnd_snapshot_stale == 1") {
		t.Error("no VulndDataOld rule on vulnd_snapshot_stale")
	}
}
