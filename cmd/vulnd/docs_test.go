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
