package main

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOperationsListsServeFlags: docs/OPERATIONS.md says every setting is
// a flag of vulnd serve and lists them in a table; every flag serve -h
// prints is in it.
func TestOperationsListsServeFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("vulnd serve -h: exit %d: %s", code, errb.String())
	}
	doc, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "Every setting is a flag of `vulnd serve`")
	if !ok {
		t.Fatal("docs/OPERATIONS.md no longer has its table of serve flags")
	}
	table, _, _ = strings.Cut(table, "\n\n`") // the table ends at the paragraph after it
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(-[a-z-]+)").FindAllStringSubmatch(table, -1) {
		listed[m[1]] = true
	}
	flags := regexp.MustCompile(`(?m)^  (-[a-z-]+)`).FindAllStringSubmatch(out.String(), -1)
	if len(flags) < 10 {
		t.Fatalf("found %d flags in vulnd serve -h:\n%s", len(flags), out.String())
	}
	for _, f := range flags {
		if !listed[f[1]] {
			t.Errorf("docs/OPERATIONS.md's table of serve flags lacks %s", f[1])
		}
	}
}

// TestPublishHelpIsTrue: vulnd help publish says what publish prints and
// how it exits, and publish does so: REF@DIGEST snapshot ID on stdout
// (pull_test.go's publish reads it), exit 2 for a bad -to, exit 1 for a
// registry that does not answer.
func TestPublishHelpIsTrue(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help", "publish"}, &out, &errb); code != 0 {
		t.Fatalf("vulnd help publish: exit %d: %s", code, errb.String())
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"REF@DIGEST snapshot ID", "exits 2", "exits 1"} {
		if !strings.Contains(help, want) {
			t.Errorf("vulnd help publish does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(help, "Prints the artifact's digest on stdout") {
		t.Errorf("vulnd help publish says it prints the digest alone:\n%s", out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"publish", "-to", "registry.example.com/vulnd/snapshots:x", "snap"}, &out, &errb); code != 2 {
		t.Errorf("vulnd publish with a -to that is no oci:// reference: exit %d, want 2 (%s)", code, errb.String())
	}
}

// TestAPIDocLinkParameters: docs/API.md lists, in order, the parameters
// the Link header keeps; a request with every one of /cve's gets links
// that keep them in that order.
func TestAPIDocLinkParameters(t *testing.T) {
	doc, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	_, rule, ok := strings.Cut(flat, "The links keep the parameters that select the list, in this order: ")
	if !ok {
		t.Fatal("docs/API.md no longer says which parameters the links keep")
	}
	rule, _, _ = strings.Cut(rule, "`page` comes last")
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(rule, -1) {
		documented = append(documented, m[1])
	}
	m := &Main{Snapshot: "../../snapshots/demo", Addr: "127.0.0.1:0"}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := http.Get("http://" + m.APIAddr() + "/cve?published_since=2000-01-01T00:00:00Z&kev=FALSE&version=4.0" +
		"&updated_since=2000-01-01T00:00:00Z&product=log4j&vendor=apache&cwe=CWE-79&cvss=HIGH&format=json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	first, _, _ := strings.Cut(res.Header.Get("Link"), ">")
	_, query, _ := strings.Cut(first, "?")
	var kept []string
	for _, kv := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "page" {
			kept = append(kept, k)
		}
	}
	if len(kept) != 8 {
		t.Fatalf("Link %q keeps %v, want the 8 filters sent", res.Header.Get("Link"), kept)
	}
	var want []string // the documented order, of the parameters /cve takes
	for _, d := range documented {
		if slices.Contains(kept, d) {
			want = append(want, d)
		}
	}
	if !slices.Equal(want, kept) {
		t.Errorf("docs/API.md lists the Link parameters as %v; the links keep %v, in that order", documented, kept)
	}
}

// TestOperationsNamesDockerImage: docs/OPERATIONS.md names the Go image
// the Dockerfile pins, and no other.
func TestOperationsNamesDockerImage(t *testing.T) {
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FROM (golang:\S+)`).FindSubmatch(dockerfile)
	if m == nil {
		t.Fatal("the Dockerfile has no FROM golang:... line")
	}
	doc, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(golang:[^`]+)`").FindAllSubmatch(doc, -1)
	if len(named) == 0 {
		t.Errorf("docs/OPERATIONS.md does not name the Dockerfile's %s", m[1])
	}
	for _, n := range named {
		if !bytes.Equal(n[1], m[1]) {
			t.Errorf("docs/OPERATIONS.md names %s; the Dockerfile pins %s", n[1], m[1])
		}
	}
}
