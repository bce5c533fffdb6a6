package index

import (
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeEntryRules: what a rulesDecoder reads of a text, whenever
// it reads it, is what json.Unmarshal decodes into a new []entryRules
// (an empty slice and nil aside), also when it reuses the slices of a
// previous text.
func FuzzDecodeEntryRules(f *testing.F) {
	var texts [][]byte
	for _, c := range append(detailsCVEs(), manyEntryCVEs(3)...) {
		if len(c.Affected) > 0 {
			texts = append(texts, encode(c.Affected))
		}
	}
	texts = append(texts,
		[]byte(`[{"default_status":null,"versions":null},{"versions":[]}]`),
		[]byte(`[{"versions":[{"version":"1\u002e0","status":"affected","changes":null},{"version":null,"lessThan":null}]}]`),
		[]byte(` [ { "Versions" : [ ] } ] `),
		[]byte(`[{"versions":[{"version":"1","version":"2"}]}]`),
		[]byte(`[null]`), []byte(`[{"versions":[{"version":1}]}]`), []byte(`[{"x":{"y":[1,2,{"z":null}]}}] x`))
	for _, t := range texts {
		f.Add(t)
	}
	prev := texts[0]
	f.Fuzz(func(t *testing.T, text []byte) {
		// Slices left by another text first, as entryTable reuses them.
		var dec rulesDecoder
		dec.decode(prev)
		got, ok := dec.decode(text)
		if !ok {
			return
		}
		var want []entryRules
		if err := json.Unmarshal(text, &want); err != nil {
			t.Fatalf("%s read, json.Unmarshal refuses it: %v", text, err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s (-json.Unmarshal +rulesDecoder):\n%s", text, diff)
		}
	})
}

// TestDecodeEntryRulesReadsEncoded: the entries as a build stores them
// are read without json.Unmarshal, and a second text reuses the slices.
func TestDecodeEntryRulesReadsEncoded(t *testing.T) {
	var dec rulesDecoder
	for _, c := range append(detailsCVEs(), manyEntryCVEs(3)...) {
		if len(c.Affected) == 0 {
			continue
		}
		if all, ok := dec.decode(encode(c.Affected)); !ok || len(all) != len(c.Affected) {
			t.Errorf("%s: %d entries read (%v), want %d", c.Name, len(all), ok, len(c.Affected))
		}
	}
	text := encode(manyEntryCVEs(1)[0].Affected)
	allocs := testing.AllocsPerRun(100, func() { dec.decode(text) })
	if allocs > 10 { // the strings: 5 versions' texts, and 3 texts with their pointers
		t.Errorf("%v allocations a text, want its strings only", allocs)
	}
}
