package index

import (
	stdjson "encoding/json"
	"slices"
	"strings"
	"testing"
)

// keywordIndex is an index of n of NVD's sample records (repeated under
// new ids), each CVE's summary its record's English description, as a
// build makes it.
func keywordIndex(tb testing.TB, n int) *Index {
	tb.Helper()
	recs := sampleNVDRecords(tb, n)
	d := &Data{}
	for _, r := range recs {
		var c struct {
			Descriptions []struct{ Lang, Value string }
		}
		if err := stdjson.Unmarshal(r.Raw, &c); err != nil {
			tb.Fatal(err)
		}
		summary := ""
		for _, x := range c.Descriptions {
			if x.Lang == "en" {
				summary = x.Value
				break
			}
		}
		d.CVEs = append(d.CVEs, CVE{Name: r.Facts.ID, Summary: summary, CreatedAt: "2020-01-01 00:00:00Z", UpdatedAt: "2020-01-01 00:00:00Z"})
	}
	ix, err := Build(d, Meta{ID: "words"})
	if err != nil {
		tb.Fatal(err)
	}
	nvd, err := BuildNVD(recs)
	if err != nil {
		tb.Fatal(err)
	}
	ix.SetNVD(nvd)
	return ix
}

// scanNVD is SearchNVD without the word index: every record's summary
// read (what SearchNVD did before it).
func scanNVD(ix *Index, q *NVDQuery) []int32 {
	m := ix.nvd.matcher(q)
	var ids []int32
	for p := range ix.nvd.recs {
		if !m.none && ix.nvdMatch(q, int32(p), &m) {
			ids = append(ids, int32(p))
		}
	}
	return ids
}

// TestKeywordIndexIsAScan: keywordSearch through the word index answers
// what reading every summary answers, for every word of the sample's
// summaries, their prefixes, their upper case, terms with punctuation,
// pairs of terms, phrases (keywordExactMatch) and words no summary has;
// and the index does narrow the records read for a word.
func TestKeywordIndexIsAScan(t *testing.T) {
	ix := keywordIndex(t, 250)
	words := map[string]bool{}
	for p := range ix.nvd.recs {
		for _, f := range strings.Fields(string(ix.nvdSummary(ix.nvd.recs[p].key))) {
			words[f] = true
		}
	}
	var all []string
	for w := range words {
		all = append(all, w)
	}
	slices.Sort(all)
	// Every fourth word (some 800), with its variants.
	var terms []string
	for i := 0; i < len(all); i += 4 {
		w := all[i]
		terms = append(terms, w)
		if len(w) > 3 {
			terms = append(terms, w[:3], w[1:], strings.ToUpper(w))
		}
	}
	terms = append(terms, "a", "x", "ttackers", "zzzzqq", "(", "../", "cross-site", "e.g.", "remote-attackers", "é", "2.0", "_")
	var queries []NVDQuery
	for i, term := range terms {
		queries = append(queries, NVDQuery{Keywords: []string{term}})
		if i%7 == 0 {
			queries = append(queries, NVDQuery{Keywords: []string{term, terms[(i*31)%len(terms)]}})
		}
	}
	// Phrases: runs of 2 and 3 words of real summaries, and a cut one.
	for p := 0; p < len(ix.nvd.recs); p += 13 {
		f := strings.Fields(string(ix.nvdSummary(ix.nvd.recs[p].key)))
		if len(f) >= 4 {
			queries = append(queries, NVDQuery{Phrase: f[1] + " " + f[2]}, NVDQuery{Phrase: strings.Join(f[:3], " ")},
				NVDQuery{Phrase: f[0] + " " + f[1][:len(f[1])/2+1]})
		}
	}
	matched := 0
	for i := range queries {
		q := &queries[i]
		want := scanNVD(ix, q)
		got := ix.SearchNVD(q)
		if got.Len() != len(want) || !slices.Equal(got.ids, want) {
			t.Fatalf("%+v: %d records %v, want %d %v", *q, got.Len(), got.ids, len(want), want)
		}
		matched += len(want)
	}
	if matched == 0 {
		t.Fatal("no query matched anything")
	}
	set := ix.keywordCandidates(&NVDQuery{Keywords: []string{"sendmail"}})
	n := 0
	eachSet(set, func(int32) { n++ })
	if set == nil || n == 0 || n >= ix.nvd.Len()/10 {
		t.Errorf("sendmail: %d candidates of %d records, want a few", n, ix.nvd.Len())
	}
}

// BenchmarkNVDKeyword: keywordSearch over 20,000 records, through the
// word index (made before the timer starts) and by reading every
// summary.
func BenchmarkNVDKeyword(b *testing.B) {
	ix := keywordIndex(b, 20000)
	ix.nvdWordIndex()
	for _, q := range []NVDQuery{{Keywords: []string{"sendmail"}}, {Keywords: []string{"remote", "attackers"}}, {Phrase: "remote attackers"}} {
		b.Run(strings.Join(append(q.Keywords, q.Phrase), "+")+"/index", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ix.SearchNVD(&q)
			}
		})
		b.Run(strings.Join(append(q.Keywords, q.Phrase), "+")+"/scan", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				scanNVD(ix, &q)
			}
		})
	}
}
