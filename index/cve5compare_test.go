package index

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseComparisons(t *testing.T) {
	tests := []struct {
		in   string
		want condList // nil with ok false: not a comparison text
		ok   bool
	}{
		// Real ones, from ../shared/data/cve5.
		{"< 8.8.2", condList{{opLT, "8.8.2"}}, true},
		{"<= 2.0.1", condList{{opLE, "2.0.1"}}, true},
		{"<= 8.5.6", condList{{opLE, "8.5.6"}}, true},
		{">= 2.0.0, < 2.0.7", condList{{opGE, "2.0.0"}, {opLT, "2.0.7"}}, true},
		{">= 8.0.0-alpha.0, < 8.0.0-alpha.4", condList{{opGE, "8.0.0-alpha.0"}, {opLT, "8.0.0-alpha.4"}}, true},
		{"5.5.54 and earlier", condList{{opLE, "5.5.54"}}, true},
		// The decisions' forms and their spellings.
		{">= 4.0.0, < 4.1.2", condList{{opGE, "4.0.0"}, {opLT, "4.1.2"}}, true},
		{">=4.0.0 <4.1.2", condList{{opGE, "4.0.0"}, {opLT, "4.1.2"}}, true},
		{">= 4.0.0 && < 4.1.2", condList{{opGE, "4.0.0"}, {opLT, "4.1.2"}}, true},
		{"> 1.0", condList{{opGT, "1.0"}}, true},
		{"= 1.0", condList{{opEQ, "1.0"}}, true},
		{"== 1.0", condList{{opEQ, "1.0"}}, true},
		{"< 11.0.1 FP7", condList{{opLT, "11.0.1 FP7"}}, true},
		{"1.0 - 2.0", condList{{opGE, "1.0"}, {opLE, "2.0"}}, true},
		{"  1.0  -  2.0 ", condList{{opGE, "1.0"}, {opLE, "2.0"}}, true},
		{"<= 6.1.*", condList{{opSeriesLE, "6.1"}}, true},
		{"> 6.1.x", condList{{opSeriesGT, "6.1"}}, true},
		{">= 6.1.*", condList{{opGE, "6.1"}}, true},
		{"< *", condList{}, true},
		{"3.2 or later", condList{{opGE, "3.2"}}, true},
		{"3.2 And Prior", condList{{opLE, "3.2"}}, true},
		{"before 3.2", condList{{opLT, "3.2"}}, true},
		{"All versions prior to 3.2", condList{{opLT, "3.2"}}, true},
		// Not comparisons: taken as plain versions.
		{"1.0", nil, false},
		{"1.0-2.0", nil, false},
		{"n/a", nil, false},
		{"", nil, false},
		{"<", nil, false},
		{"< n/a", nil, false},
		{"< 1.0 || > 2.0", nil, false},
		{"1.0 - ", nil, false},
		{"1.0 - 2.0 - 3.0", nil, false},
		{"~> 1.0", nil, false},
		{"all and earlier", nil, false},
		{"3.2 and sooner", nil, false},
		{"1.0 before 3.2", nil, false},
		{"before 3.2 and 4.0", nil, false},
	}
	for _, tt := range tests {
		got, ok := parseComparisons(tt.in)
		if ok != tt.ok {
			t.Errorf("parseComparisons(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(cond{})); diff != "" {
			t.Errorf("parseComparisons(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// formatConds writes conditions back as a comparison text.
func formatConds(cs condList) string {
	ops := map[condOp]string{opEQ: "=", opLT: "<", opLE: "<=", opGT: ">", opGE: ">="}
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch c.op {
		case opSeriesLE:
			b.WriteString("<= " + c.v + ".*")
		case opSeriesGT:
			b.WriteString("> " + c.v + ".*")
		case opSeriesEQ:
			b.WriteString("= " + c.v + ".*")
		default:
			b.WriteString(ops[c.op] + " " + c.v)
		}
	}
	return b.String()
}

// FuzzParseComparisons checks that the parser never panics, that what it
// accepts holds only bounds with a digit and reads back the same once
// written out, and that the status algorithm never panics on a version
// object holding the text.
func FuzzParseComparisons(f *testing.F) {
	for _, s := range []string{"< 8.8.2", "<= 2.0.1", ">= 4.0.0, < 4.1.2", "1.0 - 2.0", "5.5.54 and earlier",
		"before 3.2", "<= 6.1.*", "> 1.x", "< *", "1.x", "n/a", "< 1 || > 2", ">=1&&<2", "= 1.0 ==2"} {
		f.Add(s, "1.5")
	}
	f.Fuzz(func(t *testing.T, s, x string) {
		cs, ok := parseComparisons(s)
		if !ok {
			if cs != nil {
				t.Fatalf("parseComparisons(%q) = %v, false", s, cs)
			}
		} else {
			for _, c := range cs {
				if !hasDigit(c.v) || c.v != strings.TrimSpace(c.v) {
					t.Fatalf("parseComparisons(%q): bound %q", s, c.v)
				}
			}
			text := formatConds(cs)
			if text != "" {
				again, ok := parseComparisons(text)
				if !ok || !cmp.Equal(again, cs, cmp.AllowUnexported(cond{})) {
					// Bounds holding operator characters cannot be
					// written back; everything else must round-trip.
					if !strings.ContainsAny(strings.Join(bounds(cs), ""), "<>=,&|") {
						t.Fatalf("parseComparisons(%q) = %v, written %q, read back %v, %v", s, cs, text, again, ok)
					}
				}
			}
		}
		for _, vs := range [][]AffectedVersion{
			{{Version: s, Status: "affected"}},
			{{Version: s, LessThan: &x, Status: "affected", Changes: []StatusChange{{At: s, Status: "unaffected"}}}},
			{{Version: x, LessThanOrEqual: &s, Status: "affected"}},
		} {
			switch st := VersionStatus(vs, nil, x); st {
			case "affected", "unaffected", "unknown":
			default:
				t.Fatalf("status %q", st)
			}
		}
	})
}

func bounds(cs condList) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.v
	}
	return out
}
