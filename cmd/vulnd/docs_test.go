package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
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

// TestReadmeExamples runs every curl example of the README against the
// bundled demo, which the README says they run on: each answers 200 with
// something in it (a list that is not empty, a batch that found every
// name).
func TestReadmeExamples(t *testing.T) {
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{Snapshot: "../../snapshots/demo", Addr: "127.0.0.1:0"}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	found := regexp.MustCompile(`(?m)^curl -s '?localhost:8080([^'\s]+)'?`).FindAllSubmatch(doc, -1)
	if len(found) < 20 {
		t.Fatalf("found %d curl examples in README.md, want at least 20", len(found))
	}
	for _, f := range found {
		target := string(f[1])
		res, err := http.Get("http://" + m.APIAddr() + target)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(res.Body)
		res.Body.Close()
		got := strings.TrimSpace(body.String())
		switch {
		case res.StatusCode != 200:
			t.Errorf("GET %s: %d %s", target, res.StatusCode, got)
		case got == "[]" || got == "":
			t.Errorf("GET %s: an empty answer; pick an example the demo has", target)
		case strings.HasPrefix(target, "/cve/batch") && !strings.Contains(got, `"missing":[]`):
			t.Errorf("GET %s: names missing from the demo: %s", target, got)
		}
	}
}

// TestReadmeLayout: the README's layout table names every directory of
// Go code and every top-level directory, and nothing that is not there.
func TestReadmeLayout(t *testing.T) {
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
			p := strings.TrimSuffix(m[1], "/")
			listed[p] = true
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("README.md's layout names %s, which is not in the tree", p)
			}
		}
	}
	root := "../.."
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if d.IsDir() && rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() && rel != "." && !strings.Contains(rel, "/") && !listed[rel] && !slices.ContainsFunc(slices.Collect(maps.Keys(listed)),
			func(p string) bool { return strings.HasPrefix(p, rel+"/") }) {
			t.Errorf("README.md's layout does not name the directory %s", rel)
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !listed[filepath.Dir(rel)] {
			listed[filepath.Dir(rel)] = true // once per directory
			t.Errorf("README.md's layout does not name %s, which holds Go code", filepath.Dir(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nvdNotice is the notice NVD asks of every product that uses its data,
// word for word (https://nvd.nist.gov/developers/terms-of-use).
const nvdNotice = "This product uses data from the NVD API but is not endorsed or certified by the NVD."

// TestLicenceAndDataTerms: the code has a licence (LICENSE, Apache 2.0),
// and the README, docs/OPERATIONS.md and the OpenAPI document's info
// carry NVD's notice word for word and name each data source's terms.
func TestLicenceAndDataTerms(t *testing.T) {
	licence, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatalf("no LICENSE: %v", err)
	}
	if !bytes.Contains(licence, []byte("Apache License\n                           Version 2.0, January 2004")) ||
		!bytes.Contains(licence, []byte("END OF TERMS AND CONDITIONS")) {
		t.Errorf("LICENSE is not the Apache License 2.0 in full")
	}
	terms := []string{
		nvdNotice,
		"https://www.cve.org/Legal/TermsOfUse",
		"https://cwe.mitre.org/about/termsofuse.html",
		"Apache License 2.0",
	}
	for _, doc := range []string{"README.md", "docs/OPERATIONS.md"} {
		b, err := os.ReadFile(filepath.Join("../..", doc))
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(string(b)), " ")
		for _, want := range append(terms, "CC0", "FIRST", "EPSS", "Known Exploited Vulnerabilities") {
			if !strings.Contains(flat, want) {
				t.Errorf("%s does not say %q", doc, want)
			}
		}
	}
	raw, err := os.ReadFile("../../httpapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Info struct {
			Description string `json:"description"`
			License     *struct {
				Name       string `json:"name"`
				Identifier string `json:"identifier"`
				URL        string `json:"url"`
			} `json:"license"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	// OpenAPI 3.1's License Object: a name, and an SPDX identifier or
	// a url, not both.
	if l := spec.Info.License; l == nil || l.Name == "" || l.Identifier != "Apache-2.0" || l.URL != "" {
		t.Errorf("openapi.json info.license %+v, want a name and the SPDX identifier Apache-2.0", l)
	}
	for _, want := range terms[:3] {
		if !strings.Contains(spec.Info.Description, want) {
			t.Errorf("openapi.json info.description does not say %q", want)
		}
	}
}
