package loader

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/loadertest"
)

// recordsRefresh is the sample's NVD feeds with the sample's CVE JSON 5
// records among the inputs (mixed in, as a build may be given them), and
// a record file of CVEs NVD's sample lacks: the first build of a chain
// of refreshes, and the records shared by the chain.
type recordsRefresh struct {
	dir, cwe, yearly string
	records          []string // cvelist, vulnrichment, extra
	// both are CVEs of NVD's sample that records give entries to.
	both []string
	// nvd are the sample's NVD records (vulnerabilities elements) by id.
	nvd map[string]string
}

// extraRecords are records of CVEs NVD's sample lacks: CVE-2099-0001,
// whose entry's product comes from its packageName, and CVE-2099-0002.
const extraRecords = `[` +
	`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2099-0001","state":"PUBLISHED","assignerShortName":"test","datePublished":"2024-01-01T00:00:00.000Z","dateUpdated":"2024-07-20T00:00:00.000Z"},` +
	`"containers":{"cna":{"providerMetadata":{"shortName":"tcna"},"descriptions":[{"lang":"en","value":"one"}],"affected":[{"vendor":"Pkgvendor","product":"n/a","packageName":"pkgname","versions":[{"version":"1.0","status":"affected"}]}],"references":[]}}},` +
	`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2099-0002","state":"PUBLISHED","assignerShortName":"test","datePublished":"2024-01-01T00:00:00.000Z","dateUpdated":"2024-07-21T00:00:00.000Z"},` +
	`"containers":{"cna":{"providerMetadata":{"shortName":"tcna"},"descriptions":[{"lang":"en","value":"two"}],"affected":[{"vendor":"Acme","product":"Anvil","versions":[{"version":"2.0","status":"affected"}]}],"references":[]}}}]`

func newRecordsRefresh(t *testing.T) *recordsRefresh {
	dir := t.TempDir()
	r := &recordsRefresh{dir: dir, cwe: smallCatalog(t, dir)}
	r.yearly = copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json.gz")
	r.records = []string{
		copyAs(t, sharedPath(t, "cve5/cvelistV5-sample.json.gz"), filepath.Join(dir, "cve5"), "cvelistV5-sample.json.gz"),
		copyAs(t, sharedPath(t, "cve5/vulnrichment-sample.json.gz"), filepath.Join(dir, "cve5"), "vulnrichment-sample.json.gz"),
		writeAs(t, []byte(extraRecords), filepath.Join(dir, "cve5"), "extra.json"),
	}
	recs, _, err := ReadCVE5Files(r.records)
	if err != nil {
		t.Fatal(err)
	}
	r.nvd = map[string]string{}
	for _, rec := range sampleRecords(t, string(realFeed(t))) {
		var head struct {
			CVE struct {
				ID string `json:"id"`
			} `json:"cve"`
		}
		if err := json.Unmarshal([]byte(rec), &head); err != nil {
			t.Fatal(err)
		}
		r.nvd[head.CVE.ID] = rec
	}
	for _, rec := range recs {
		if _, ok := r.nvd[rec.ID]; ok && len(rec.Affected) > 0 {
			r.both = append(r.both, rec.ID)
		}
	}
	if len(r.both) < 3 {
		t.Fatalf("%d CVEs of NVD's sample have entries from the records", len(r.both))
	}
	return r
}

// feedDoc is an NVD feed of the records rs.
func feedDoc(rs ...string) []byte {
	return []byte(`{"resultsPerPage":0,"startIndex":0,"totalResults":0,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-21T00:00:00.000","vulnerabilities":[` + strings.Join(rs, ",") + `]}`)
}

// opts are the build options of a day whose modified feed is modified:
// the inputs in a mixed order.
func (r *recordsRefresh) opts(t *testing.T, name string, modified []byte) BuildOptions {
	m := writeAs(t, modified, filepath.Join(r.dir, name), "nvdcve-2.0-modified.json")
	return BuildOptions{CWECatalog: r.cwe, Feeds: []string{r.records[0], r.yearly, m, r.records[1], r.records[2]},
		Out: filepath.Join(r.dir, name, "snap"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
}

// withoutCPEs is an NVD record (a vulnerabilities element) without its
// configurations.
func withoutCPEs(t *testing.T, rec string) string {
	t.Helper()
	var v map[string]map[string]any
	if err := json.Unmarshal([]byte(rec), &v); err != nil {
		t.Fatal(err)
	}
	delete(v["cve"], "configurations")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// renamed is an NVD record given another id.
func renamed(rec, from, to string) string { return strings.ReplaceAll(rec, `"`+from+`"`, `"`+to+`"`) }

// TestIncrementalWithRecords is issue 29 item 1 with the records in:
// the record files unchanged (the two-hourly refresh between the CVE
// Program's deltas), a build with -previous reads only the changed feed
// and carries what the records gave, writing what a full build writes,
// every file byte for byte: a CVE served from its record alone that NVD
// then publishes (older than the record, which the guard lets through),
// CVEs of NVD with entries whose NVD record changed, one of them losing
// its CPEs, a CVE whose entry's product comes from its packageName, EPSS
// scores that move for CVEs with entries (their alerts' handlers).
func TestIncrementalWithRecords(t *testing.T) {
	r := newRecordsRefresh(t)
	first := r.opts(t, "day1", feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/before.json.gz"))))...))
	first.EPSS = writeAs(t, []byte(epssCSV(append(slices.Clone(r.both), "CVE-2099-0001"), 0.1)), filepath.Join(r.dir, "day1"), "epss_scores-2026-11-20.csv")
	buildLogged(t, first)

	// Day 2: NVD's after.json.gz publishes CVE-2024-6728 (a record's
	// alone until now), and records of CVEs with entries change.
	mods := sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/after.json.gz"))))
	for _, id := range r.both[:3] {
		mods = append(mods, touch(t, r.nvd[id], "2026-11-21T05:00:00.000"))
	}
	second := r.opts(t, "day2", feedDoc(mods...))
	second.Previous, second.Time = first.Out, first.Time.Add(2*time.Hour)
	second.EPSS = writeAs(t, []byte(epssCSV(append(slices.Clone(r.both), "CVE-2099-0001"), 0.5)), filepath.Join(r.dir, "day2"), "epss_scores-2026-11-21.csv")
	log := incrementalAndFull(t, second)
	t.Logf("second: %q", log)
	if !incremental(log) || !slices.ContainsFunc(log, func(l string) bool { return strings.HasPrefix(l, "carry CVE JSON 5 records: ") }) {
		t.Fatalf("not incremental: %q", log)
	}
	buildLogged(t, second)

	// Day 3: NVD publishes CVE-2099-0001 and CVE-2099-0002 (no CPEs),
	// and a CVE with entries loses its CPEs.
	mods = append(mods,
		withoutCPEs(t, touch(t, renamed(r.nvd[r.both[0]], r.both[0], "CVE-2099-0002"), "2026-11-21T07:00:00.000")),
		withoutCPEs(t, touch(t, r.nvd[r.both[1]], "2026-11-21T07:00:00.000")))
	third := r.opts(t, "day3", feedDoc(mods...))
	third.Previous, third.Time = second.Out, second.Time.Add(2*time.Hour)
	log = incrementalAndFull(t, third)
	t.Logf("third: %q", log)
	if !incremental(log) {
		t.Errorf("not incremental: %q", log)
	}
	buildLogged(t, third)

	// Day 4: CVE-2099-0001, whose product comes from a packageName, is
	// published by NVD without CPEs: its keys are carried; then it loses
	// CPEs it had: read again.
	fourth := r.opts(t, "day4", feedDoc(append(mods, withoutCPEs(t, touch(t, renamed(r.nvd[r.both[2]], r.both[2], "CVE-2099-0001"), "2026-11-21T08:00:00.000")))...))
	fourth.Previous, fourth.Time = third.Out, third.Time.Add(2*time.Hour)
	if log := incrementalAndFull(t, fourth); !incremental(log) {
		t.Errorf("not incremental: %q", log)
	}
	withCPEs := r.opts(t, "day4b", feedDoc(append(mods, touch(t, renamed(r.nvd[r.both[2]], r.both[2], "CVE-2099-0001"), "2026-11-21T08:00:00.000"))...))
	withCPEs.Previous, withCPEs.Time = third.Out, third.Time.Add(2*time.Hour)
	buildLogged(t, withCPEs)
	lost := r.opts(t, "day5", feedDoc(append(mods, withoutCPEs(t, touch(t, renamed(r.nvd[r.both[2]], r.both[2], "CVE-2099-0001"), "2026-11-21T09:00:00.000")))...))
	lost.Previous, lost.Time = withCPEs.Out, withCPEs.Time.Add(2*time.Hour)
	log = incrementalAndFull(t, lost)
	if want := "full build: not incremental: NVD's record of CVE-2099-0001 lost its CPEs, and its record's affected entries name products by packageName, which the previous snapshot does not keep"; !slices.Contains(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}

// TestIncrementalWithRecordsFallbacks: with records among the inputs, a
// build with -previous reads every input, and says why, when a record
// file changed and no longer holds a record the build took (a record
// removed), the record files changed are most of them (another file at
// a place: a new day's baseline, read as a full build reads it), the alias
// file is another, or the previous snapshot does not say where each
// record came from (format 10); the snapshot is the same.
func TestIncrementalWithRecordsFallbacks(t *testing.T) {
	r := newRecordsRefresh(t)
	before := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/before.json.gz"))))...)
	after := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/after.json.gz"))))...)
	first := r.opts(t, "day1", before)
	buildLogged(t, first)
	aliases := writeAs(t, []byte("pkgvendor/pkgname acme/anvil\n"), r.dir, "aliases.txt")
	// A record of CVE-2099-0002 changes its entries (an Affected
	// changed alert), CVE-2099-0001's is removed.
	delta := writeAs(t, []byte(strings.Replace(extraRecords[strings.Index(extraRecords, `{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2099-0002"`):len(extraRecords)-1],
		`"2024-07-21T00:00:00.000Z"},`, `"2024-07-22T00:00:00.000Z"},`, 1)), filepath.Join(r.dir, "delta"), "extra.json")
	delta = writeAs(t, []byte(strings.Replace(string(mustRead(t, delta)), `"version":"2.0"`, `"version":"2.1"`, 1)), filepath.Join(r.dir, "delta"), "extra.json")
	for _, tc := range []struct {
		name string
		opt  func(*BuildOptions)
		why  string
	}{
		{"aliases", func(o *BuildOptions) { o.Aliases = aliases }, "the alias file is not the one the previous snapshot was built with"},
		{"record removed", func(o *BuildOptions) { o.Feeds[4] = delta }, "the records of 1 CVE (CVE-2099-0001) came from a record file replaced, and the files read hold none as recent: which record the unchanged files hold is not known"},
		{"another file", func(o *BuildOptions) { o.Feeds[3] = r.records[0] }, "the CVE JSON 5 record files changed are 47 % of their bytes (a new baseline?): read as a full build reads them"},
		{"no records", func(o *BuildOptions) { o.Feeds = o.Feeds[1:3] }, "the previous snapshot was built from 6 inputs, this build reads 2 feeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := r.opts(t, "day2-"+strings.ReplaceAll(tc.name, " ", "-"), after)
			tc.opt(&opt)
			opt.Previous, opt.Time, opt.Force = first.Out, first.Time.Add(2*time.Hour), true
			log := incrementalAndFull(t, opt)
			if want := "full build: not incremental: " + tc.why; !slices.Contains(log, want) || incremental(log) {
				t.Errorf("log %q, want %q", log, want)
			}
		})
	}
	// A snapshot of format 10, which does not say where each record
	// came from.
	ten := r.opts(t, "ten", before)
	func() {
		defer func(v int) { writeVersion = v }(writeVersion)
		writeVersion = 10
		buildLogged(t, ten)
	}()
	opt10 := r.opts(t, "day2-10", after)
	opt10.Previous, opt10.Time, opt10.Force = ten.Out, first.Time.Add(2*time.Hour), true
	if log := incrementalAndFull(t, opt10); !slices.Contains(log, "full build: not incremental: the previous snapshot is of format 10, which does not say which input each CVE JSON 5 record came from") {
		t.Errorf("from format 10: %q", log)
	}
}

// TestIncrementalWithRecordsGuard: NVD's records going back in time
// with the records unchanged: the refresh guard, which the carried
// records give no dateUpdated of NVD's CVEs, refuses, and the full build
// it falls back to decides as a full build does.
func TestIncrementalWithRecordsGuard(t *testing.T) {
	r := newRecordsRefresh(t)
	before := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/before.json.gz"))))...)
	after := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/after.json.gz"))))...)
	first := r.opts(t, "day1", after)
	buildLogged(t, first)
	back := r.opts(t, "day2", before)
	back.Previous, back.Time = first.Out, first.Time.Add(2*time.Hour)
	inc, full := back, back
	inc.Out, full.Out, full.Full = filepath.Join(r.dir, "inc"), filepath.Join(r.dir, "full"), true
	_, ierr := Build(inc)
	_, ferr := Build(full)
	t.Logf("refused: %v", ierr)
	if fmt.Sprint(ierr) != fmt.Sprint(ferr) || ierr == nil {
		t.Errorf("incremental: %v; full: %v; want the same refusal", ierr, ferr)
	}
	// A record's dateUpdated later than NVD's lastModified lets it through.
	back.Force = true
	incrementalAndFull(t, back)
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// epssCSV is an EPSS file scoring the CVEs ids at score.
func epssCSV(ids []string, score float64) string {
	var b strings.Builder
	b.WriteString("#model_version:v2026.06.15,score_date:2026-11-20T12:00:22Z\ncve,epss,percentile\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%s,%.5f,0.50000\n", id, score)
	}
	return b.String()
}

// TestIncrementalWithRecordsDelta is the CVE Program's first hourly
// delta after the midnight baseline, then that delta replaced by the next one (another name at its place, a superset of
// it): a build with -previous reads only the new delta of the record
// files and decides each CVE's record as a full read does, writing what a
// full build writes, byte for byte: a record-only CVE's entries change
// (an "Affected changed" alert), a CVE of NVD takes a newer record with
// other entries, another one a record of the same dateUpdated as the
// baseline's (the delta, read later, wins), a record-only CVE appears;
// the next delta without a record the previous one gave falls back.
func TestIncrementalWithRecordsDelta(t *testing.T) {
	r := newRecordsRefresh(t)
	recs, _, err := ReadCVE5Files(r.records[:2])
	if err != nil {
		t.Fatal(err)
	}
	var tie *CVE5Record // a record of a CVE of NVD the baseline holds
	for _, rec := range recs {
		if rec.ID == r.both[1] {
			tie = rec
		}
	}
	if tie == nil || tie.Modified.IsZero() {
		t.Fatalf("no dated record of %s", r.both[1])
	}
	before := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/before.json.gz"))))...)
	after := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/after.json.gz"))))...)
	day := func(name string, modified []byte, delta string, records ...string) BuildOptions {
		opt := r.opts(t, name, modified)
		opt.Feeds[4] = writeAs(t, []byte("["+strings.Join(records, ",")+"]"), filepath.Join(r.dir, name), delta)
		return opt
	}
	one := extraRecords[1:strings.Index(extraRecords, `,{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2099-0002"`)]
	two := extraRecords[len(one)+2 : len(extraRecords)-1]
	twoNewer := strings.Replace(strings.Replace(two, `"2024-07-21T00:00:00.000Z"`, `"2024-07-22T00:00:00.000Z"`, 1), `"version":"2.0"`, `"version":"3.0"`, 1)
	// Midnight: the baseline alone; at one, the day's first delta after
	// it, which the build reads alone.
	zero := day("day0", before, "unused.json")
	zero.Feeds, zero.Time = zero.Feeds[:4], zero.Time.Add(-time.Hour)
	buildLogged(t, zero)
	first := day("day1", before, "2026-11-21_delta_CVEs_at_0100Z.json", one, two)
	first.Previous = zero.Out
	if log := incrementalAndFull(t, first); !incremental(log) {
		t.Fatalf("the first delta not read alone: %q", log)
	}
	buildLogged(t, first)

	second := day("day2", after, "2026-11-21_delta_CVEs_at_0200Z.json", one, twoNewer,
		cve5JSON(r.both[0], "2026-11-21T01:30:00.000Z", "newer, other entries"),
		strings.Replace(cve5JSON(r.both[1], tie.Modified.Format(time.RFC3339Nano), "as recent"), `"version":"1.0"`, `"version":"1.1"`, 1),
		cve5JSON("CVE-2099-0004", "2026-11-21T01:40:00.000Z", "new"))
	second.Previous, second.Time = first.Out, first.Time.Add(time.Hour)
	log := incrementalAndFull(t, second)
	if !incremental(log) || !slices.ContainsFunc(log, func(l string) bool {
		return strings.HasPrefix(l, "carry CVE JSON 5 records: ") && strings.HasSuffix(l, "1 record file read (5 records, 5 of them taken)")
	}) {
		t.Fatalf("not incremental, or not the delta alone read: %q", log)
	}
	buildLogged(t, second)
	snap, err := Read(second.Out)
	if err != nil {
		t.Fatal(err)
	}
	var alerts []index.Alert
	for _, rep := range snap.Data.Reports {
		if rep.CreatedAt == formatTime(second.Time) {
			alerts = rep.Alerts
		}
	}
	for _, name := range []string{"CVE-2099-0002", r.both[0], r.both[1]} {
		if !slices.ContainsFunc(alerts, func(a index.Alert) bool {
			return a.CVE == name && slices.ContainsFunc(a.Events, func(e index.Event) bool { return e.Type == index.EventAffectedChanged })
		}) {
			t.Errorf("no Affected changed alert of %s", name)
		}
	}

	// A delta with a bad record: the error of a full build, naming the
	// file and the record.
	bad := day("bad", after, "2026-11-21_delta_CVEs_at_0300Z.json", one, strings.Replace(twoNewer, `"status":"affected"`, `"status":7`, 1))
	bad.Previous, bad.Time = second.Out, second.Time.Add(time.Hour)
	_, ierr := Build(bad)
	bad.Full = true
	_, ferr := Build(bad)
	if ierr == nil || fmt.Sprint(ierr) != fmt.Sprint(ferr) || !strings.Contains(ierr.Error(), "2026-11-21_delta_CVEs_at_0300Z.json: record 2 (CVE-2099-0002)") {
		t.Errorf("a bad record: %v; full build: %v", ierr, ferr)
	}

	// The next hour's delta, which no longer holds CVE-2099-0004.
	third := day("day3", after, "2026-11-21_delta_CVEs_at_0300Z.json", one, twoNewer)
	third.Previous, third.Time, third.Force = second.Out, second.Time.Add(time.Hour), true
	log = incrementalAndFull(t, third)
	if want := "full build: not incremental: the records of 3 CVEs (" + strings.Join(slices.Sorted(slices.Values([]string{r.both[0], r.both[1], "CVE-2099-0004"})), ", ") +
		") came from a record file replaced, and the files read hold none as recent: which record the unchanged files hold is not known"; !slices.Contains(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}

// TestIncrementalWithRecordsSharedTexts: texts a build takes by id from
// the previous snapshot's table (a carried CVE's entries and keys) that
// records read anew give too, by value, before the carried CVE (in name
// order) and after it, are listed once, as a full build lists them: the
// same snapshot, byte for byte.
func TestIncrementalWithRecordsSharedTexts(t *testing.T) {
	r := newRecordsRefresh(t)
	before := feedDoc(sampleRecords(t, string(loadertest.Gunzip(t, sharedPath(t, "nvd/changes/before.json.gz"))))...)
	first := r.opts(t, "day1", before)
	buildLogged(t, first)

	// CVE-2099-0002's record, carried, and two copies of it under other
	// names, read from the day's first delta.
	one := extraRecords[1:strings.Index(extraRecords, `,{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2099-0002"`)]
	two := extraRecords[len(one)+2 : len(extraRecords)-1]
	delta := "[" + renamed(two, "CVE-2099-0002", "CVE-2099-0000") + "," + renamed(two, "CVE-2099-0002", "CVE-2099-0003") + "]"
	second := r.opts(t, "day2", before)
	second.Feeds = append(second.Feeds, writeAs(t, []byte(delta), filepath.Join(r.dir, "day2"), "2026-11-21_delta_CVEs_at_0100Z.json"))
	second.Previous, second.Time = first.Out, first.Time.Add(time.Hour)
	log := incrementalAndFull(t, second)
	if !incremental(log) || !slices.ContainsFunc(log, func(l string) bool {
		return strings.HasPrefix(l, "carry CVE JSON 5 records: ") && strings.HasSuffix(l, "1 record file read (2 records, 2 of them taken)")
	}) {
		t.Fatalf("not incremental, or not the delta alone read: %q", log)
	}
	buildLogged(t, second)
	ix, _, err := Load(second.Out)
	if err != nil {
		t.Fatal(err)
	}
	affected := func(name string) string {
		body, err := ix.AppendDetails(nil, name)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Affected json.RawMessage `json:"affected"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return string(v.Affected)
	}
	want := affected("CVE-2099-0002")
	for _, name := range []string{"CVE-2099-0000", "CVE-2099-0003"} {
		if got := affected(name); got != want || !strings.Contains(got, "Anvil") {
			t.Errorf("%s's entries %s, want %s", name, got, want)
		}
	}
}
