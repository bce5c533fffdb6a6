package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeNext writes the next day of the data set (n, seed) into a new
// temp dir.
func writeNext(t *testing.T, n int, seed uint64, rate float64) string {
	t.Helper()
	dir := t.TempDir()
	p, err := NewPlan(Config{CVEs: n, Seed: seed, Next: true, ChangeRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rawRecords reads every feed of dir: each record's bytes by id, the
// ids of each year in feed order, and the feeds' timestamps.
func rawRecords(t *testing.T, dir string) (recs map[string]json.RawMessage, ids map[int][]string, stamps map[string]bool) {
	t.Helper()
	type feed struct {
		TotalResults    int    `json:"totalResults"`
		Timestamp       string `json:"timestamp"`
		Vulnerabilities []struct {
			CVE json.RawMessage `json:"cve"`
		} `json:"vulnerabilities"`
	}
	feeds := make([]feed, numYears)
	errs := make([]error, numYears)
	var wg sync.WaitGroup
	for k := range feeds {
		wg.Go(func() {
			f, err := os.Open(filepath.Join(dir, FeedName(firstYear+k)))
			if err != nil {
				errs[k] = err
				return
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				errs[k] = err
				return
			}
			raw, err := io.ReadAll(zr)
			if err == nil {
				err = json.Unmarshal(raw, &feeds[k])
			}
			errs[k] = err
		})
	}
	wg.Wait()
	recs, ids, stamps = map[string]json.RawMessage{}, map[int][]string{}, map[string]bool{}
	for k, fd := range feeds {
		y := firstYear + k
		if errs[k] != nil {
			t.Fatalf("%d: %v", y, errs[k])
		}
		if fd.TotalResults != len(fd.Vulnerabilities) {
			t.Errorf("%d: totalResults %d for %d records", y, fd.TotalResults, len(fd.Vulnerabilities))
		}
		stamps[fd.Timestamp] = true
		for _, v := range fd.Vulnerabilities {
			id := recordID(t, v.CVE)
			if _, dup := recs[id]; dup {
				t.Errorf("duplicate id %s", id)
			}
			recs[id] = v.CVE
			ids[y] = append(ids[y], id)
		}
	}
	return recs, ids, stamps
}

// recordID returns the id of a record, read from its start when it
// begins with it as the generator writes it.
func recordID(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	const head = `{"id":"`
	if rest, ok := bytes.CutPrefix(raw, []byte(head)); ok {
		if k := bytes.IndexByte(rest, '"'); k > 0 && reID.Match(rest[:k]) {
			return string(rest[:k])
		}
	}
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func decodeCVE(t *testing.T, raw json.RawMessage) tCVE {
	t.Helper()
	var c tCVE
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// withoutStatus is a record's JSON without lastModified and vulnStatus.
func withoutStatus(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "lastModified")
	delete(m, "vulnStatus")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// changeKinds names the kinds of change between two versions of a
// record, as changeKindNames does.
func changeKinds(t *testing.T, oldRaw, newRaw json.RawMessage) []string {
	t.Helper()
	o, n := decodeCVE(t, oldRaw), decodeCVE(t, newRaw)
	if o.VulnStatus != "Rejected" && n.VulnStatus == "Rejected" {
		return []string{"rejected"}
	}
	var kinds []string
	if o.Descriptions[0].Value != n.Descriptions[0].Value {
		kinds = append(kinds, "description")
	}
	cpes := func(c tCVE) map[string]bool {
		m := map[string]bool{}
		for _, conf := range c.Configurations {
			for _, node := range conf.Nodes {
				for _, x := range node.CPEMatch {
					m[x.MatchCriteriaID] = true
				}
			}
		}
		return m
	}
	oc, nc := cpes(o), cpes(n)
	if len(diffKeys(nc, oc)) > 0 {
		kinds = append(kinds, "cpe added")
	}
	switch {
	case len(oc) > 0 && len(nc) == 0:
		kinds = append(kinds, "cpe all removed")
	case len(diffKeys(oc, nc)) > 0:
		kinds = append(kinds, "cpe removed")
	}
	metrics := func(c tCVE) map[string]float64 {
		m := map[string]float64{}
		for key, ms := range c.Metrics {
			for _, x := range ms {
				k := key + " " + x.Source
				if _, ok := m[k]; !ok {
					m[k] = *x.CVSSData.BaseScore
				}
			}
		}
		return m
	}
	om, nm := metrics(o), metrics(n)
	if len(diffKeys(nm, om)) > 0 {
		kinds = append(kinds, "metric added")
	}
	for k, s := range nm {
		if os, ok := om[k]; ok && os != s {
			kinds = append(kinds, "metric score")
			break
		}
	}
	if len(diffKeys(om, nm)) > 0 {
		kinds = append(kinds, "metric removed")
	}
	cwes := func(c tCVE) map[string]bool {
		m := map[string]bool{}
		if c.Weaknesses != nil {
			for _, w := range *c.Weaknesses {
				for _, d := range w.Description {
					m[w.Source+" "+d.Value] = true
				}
			}
		}
		return m
	}
	ow, nw := cwes(o), cwes(n)
	switch added, removed := diffKeys(nw, ow), diffKeys(ow, nw); {
	case len(added) > 0 && len(removed) > 0:
		kinds = append(kinds, "cwe replaced")
	case len(added) > 0:
		kinds = append(kinds, "cwe added")
	}
	refs := func(c tCVE) map[string]string {
		m := map[string]string{}
		for _, r := range c.References {
			m[r.URL+" "+r.Source] = strings.Join(r.Tags, ",") + "|" + strconv.FormatBool(r.Tags != nil)
		}
		return m
	}
	urls := func(c tCVE) map[string]bool {
		m := map[string]bool{}
		for _, r := range c.References {
			m[r.URL] = true
		}
		return m
	}
	if len(diffKeys(urls(n), urls(o))) > 0 {
		kinds = append(kinds, "reference added")
	}
	if len(diffKeys(urls(o), urls(n))) > 0 {
		kinds = append(kinds, "reference removed")
	}
	or, nr := refs(o), refs(n)
	for k, tags := range nr {
		if ot, ok := or[k]; ok && ot != tags {
			kinds = append(kinds, "reference tags")
			break
		}
	}
	if len(kinds) == 0 && o.VulnStatus != n.VulnStatus && withoutStatus(t, oldRaw) == withoutStatus(t, newRaw) {
		kinds = append(kinds, "status only")
	}
	return kinds
}

// diffKeys returns the keys of a that b lacks.
func diffKeys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func TestNextDeterministic(t *testing.T) {
	const n = 1000
	a := readDir(t, writeNext(t, n, 7, 0.05))
	b := readDir(t, writeNext(t, n, 7, 0.05))
	base := readDir(t, writeSet(t, n, 7))
	if len(a) != numYears+2 { // the feeds, the catalog, the EPSS file
		t.Fatalf("got %d files, want %d", len(a), numYears+1)
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between two -next runs with the same flags", name)
		}
	}
	if !bytes.Equal(a[CatalogName], base[CatalogName]) {
		t.Errorf("the next day's catalog differs from the base one")
	}
	if bytes.Equal(a[FeedName(2024)], base[FeedName(2024)]) {
		t.Errorf("the next day wrote the same %s as the base set", FeedName(2024))
	}
}

// TestNextRecordPure checks that next-day records, changed and new, do
// not depend on what a generator drew before.
func TestNextRecordPure(t *testing.T) {
	p, err := NewPlan(Config{CVEs: testN, Seed: 3, Next: true, ChangeRate: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := p.Generator(), p.Generator()
	want := map[int][]byte{}
	for i := range p.Total() {
		b, _ := json.Marshal(g1.Record(i))
		want[i] = b
	}
	for i := p.Total() - 1; i >= 0; i -= 3 {
		b, _ := json.Marshal(g2.Record(i))
		if !bytes.Equal(b, want[i]) {
			t.Fatalf("record %d differs when drawn out of order", i)
		}
	}
}

// TestChangeCount checks that exactly round(rate*n) records change, for
// rates the feed test does not write.
func TestChangeCount(t *testing.T) {
	for _, n := range []int{1, 2, 27, 1000, 4097} {
		for _, rate := range []float64{0, 0.003, 0.01, 0.25, 1} {
			p, err := NewPlan(Config{CVEs: n, Seed: 4, Next: true, ChangeRate: rate})
			if err != nil {
				t.Fatal(err)
			}
			ranks := map[int]bool{}
			changed := 0
			for i := range n {
				k := p.permute(i)
				if k < 0 || k >= n || ranks[k] {
					t.Fatalf("n=%d: permute(%d) = %d out of range or repeated", n, i, k)
				}
				ranks[k] = true
				if _, ok := p.changeRank(i); ok {
					changed++
				}
			}
			if want := int(math.Round(rate * float64(n))); changed != want || p.Changed() != want {
				t.Errorf("n=%d rate=%v: %d records change (Changed %d), want %d", n, rate, changed, p.Changed(), want)
			}
		}
	}
	for _, rate := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := NewPlan(Config{CVEs: 10, Seed: 1, Next: true, ChangeRate: rate}); err == nil {
			t.Errorf("change rate %v accepted", rate)
		}
	}
}

func TestNextDay(t *testing.T) {
	const n = 5000
	const rate = DefaultChangeRate
	base, baseIDs, baseStamps := rawRecords(t, writeSet(t, n, 1))
	next, nextIDs, nextStamps := rawRecords(t, writeNext(t, n, 1, rate))
	if !baseStamps[feedTimestamp] || len(baseStamps) != 1 || !nextStamps[nextFeedTimestamp] || len(nextStamps) != 1 {
		t.Errorf("timestamps: base %v, next %v", baseStamps, nextStamps)
	}
	limit := time.UnixMilli(nextLimitMS).UTC()
	if got := limit.Format(timeLayout); got != "2026-11-22T23:59:59.000" {
		t.Fatalf("next-day limit %s", got)
	}
	cited, seen := map[string]bool{}, map[string]int{}
	kinds := map[string]int{}
	changed := 0
	for id, oldRaw := range base {
		newRaw, ok := next[id]
		if !ok {
			t.Errorf("%s missing from the next day", id)
			continue
		}
		if bytes.Equal(oldRaw, newRaw) {
			continue
		}
		changed++
		o, c := decodeCVE(t, oldRaw), decodeCVE(t, newRaw)
		checkCVE(t, c, limit, cited, seen)
		om, _ := time.Parse(timeLayout, o.LastModified)
		nm, err := time.Parse(timeLayout, c.LastModified)
		if err != nil || !nm.After(om) || nm.After(limit) {
			t.Errorf("%s: lastModified %s -> %s", id, o.LastModified, c.LastModified)
		}
		if c.Published != o.Published || c.SourceIdentifier != o.SourceIdentifier {
			t.Errorf("%s: published or sourceIdentifier changed", id)
		}
		ks := changeKinds(t, oldRaw, newRaw)
		if len(ks) == 0 && o.VulnStatus != "Rejected" {
			t.Errorf("%s: changed but no kind of change found", id)
		}
		for _, k := range ks {
			kinds[k]++
		}
	}
	if want := rate * n; math.Abs(float64(changed)-want) > 0.2*want {
		t.Errorf("%d of %d records changed, want about %v", changed, n, want)
	}
	for _, k := range changeKindNames {
		if kinds[k] == 0 {
			t.Errorf("no record shows the change %q", k)
		}
	}
	t.Logf("%d changed; kinds: %v", changed, kinds)

	// New records: after the last 2026 id, absent from the base set,
	// at the end of the 2026 feed, published on the next day.
	lastNum := 0
	for _, id := range baseIDs[lastYear] {
		num, _ := strconv.Atoi(strings.TrimPrefix(id, "CVE-2026-"))
		lastNum = max(lastNum, num)
	}
	for y := firstYear; y < lastYear; y++ {
		if !slices.Equal(baseIDs[y], nextIDs[y]) {
			t.Errorf("%d: the next day's ids differ", y)
		}
	}
	added := nextIDs[lastYear][len(baseIDs[lastYear]):]
	if !slices.Equal(nextIDs[lastYear][:len(baseIDs[lastYear])], baseIDs[lastYear]) || len(added) != NewCVEs(n) || len(next) != n+NewCVEs(n) {
		t.Fatalf("2026 feed: %d base ids then %d new, want %d new", len(baseIDs[lastYear]), len(added), NewCVEs(n))
	}
	dayStart := time.UnixMilli(nextDayMS).UTC()
	for _, id := range added {
		if _, ok := base[id]; ok {
			t.Errorf("new %s exists in the base set", id)
		}
		num, err := strconv.Atoi(strings.TrimPrefix(id, "CVE-2026-"))
		if err != nil || num <= lastNum {
			t.Errorf("new %s not after CVE-2026-%d", id, lastNum)
		}
		lastNum = num
		c := decodeCVE(t, next[id])
		checkCVE(t, c, limit, cited, seen)
		if pub, _ := time.Parse(timeLayout, c.Published); pub.Before(dayStart) ||
			c.VulnStatus != "Received" && c.VulnStatus != "Awaiting Analysis" {
			t.Errorf("new %s: published %s, %s", id, c.Published, c.VulnStatus)
		}
	}
	all := map[string]bool{}
	for _, id := range CitedCWEs() {
		all[id] = true
	}
	for id := range cited {
		if !all[id] {
			t.Errorf("%s cited but not in CitedCWEs", id)
		}
	}
}

// TestNextSmall checks tiny sets and a zero change rate: only the new
// records differ.
func TestNextSmall(t *testing.T) {
	for _, n := range []int{1, 27} {
		base, _, _ := rawRecords(t, writeSet(t, n, 5))
		next, ids, _ := rawRecords(t, writeNext(t, n, 5, 0))
		if len(next) != n+3 || len(ids[lastYear]) < 3 {
			t.Errorf("n=%d: %d records next day, %d in 2026", n, len(next), len(ids[lastYear]))
		}
		for id, raw := range base {
			if !bytes.Equal(raw, next[id]) {
				t.Errorf("n=%d: %s changed at rate 0", n, id)
			}
		}
	}
}

func TestNextFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-o", dir, "-cves", "10", "-change-rate", "0.5"},
		{"-o", dir, "-cves", "10", "-next", "-change-rate", "1.5"},
		{"-o", dir, "-cves", "10", "-next", "-change-rate", "-0.1"},
		{"-o", dir, "-cves", "10", "-next", "-change-rate", "NaN"},
		{"-o", dir, "-cves", "10", "-next=maybe"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
		if !strings.HasPrefix(stderr.String(), "synth: ") {
			t.Errorf("run(%q) printed %q to stderr", args, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-o", dir, "-cves", "400", "-seed", "9", "-next", "-change-rate", "0.1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("good run returned %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "next day: 40 changed, 3 new") {
		t.Errorf("stdout %q", stdout.String())
	}
}
