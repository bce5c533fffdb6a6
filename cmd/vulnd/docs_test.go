package main

import (
	"bytes"
	"os"
	"regexp"
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
