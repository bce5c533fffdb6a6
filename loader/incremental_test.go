package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
)

// copyAs copies the file at src to dir/name.
func copyAs(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAs writes data to dir/name.
func writeAs(t *testing.T, data []byte, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildLogged builds with opt and returns the lines its stages logged.
func buildLogged(t *testing.T, opt BuildOptions) []string {
	t.Helper()
	var log []string
	opt.Stage = func(name string, _ time.Duration, detail string) { log = append(log, name+": "+detail) }
	if _, err := Build(opt); err != nil {
		t.Fatal(err)
	}
	return log
}

// dirNames are the names in dir, in name order.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// sameSnapshots fails unless the snapshot directories a and b hold the
// same files, byte for byte.
func sameSnapshots(t *testing.T, a, b string) {
	t.Helper()
	na, nb := dirNames(t, a), dirNames(t, b)
	if !slices.Equal(na, nb) {
		t.Fatalf("%s holds %v, %s holds %v", a, na, b, nb)
	}
	for _, n := range na {
		x, err := os.ReadFile(filepath.Join(a, n))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the full build and the incremental one (%d and %d bytes)", n, len(x), len(y))
		}
	}
}

// incrementalAndFull builds opt with Previous both ways, checks that the
// snapshots are the same, byte for byte, and returns the incremental
// build's log.
func incrementalAndFull(t *testing.T, opt BuildOptions) []string {
	t.Helper()
	dir := t.TempDir()
	inc, full := opt, opt
	inc.Out, full.Out, full.Full = filepath.Join(dir, "inc"), filepath.Join(dir, "full"), true
	log := buildLogged(t, inc)
	flog := buildLogged(t, full)
	if slices.ContainsFunc(flog, func(l string) bool { return strings.Contains(l, "incrementally") }) {
		t.Errorf("the build with Full read incrementally: %q", flog)
	}
	sameSnapshots(t, full.Out, inc.Out)
	reads := 0
	for _, l := range log {
		if strings.HasPrefix(l, "read previous: ") {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("the previous snapshot was read %d times: %q", reads, log)
	}
	if _, err := Validate(inc.Out); err != nil {
		t.Errorf("the incremental build does not validate: %v", err)
	}
	return log
}

func incremental(log []string) bool {
	return slices.ContainsFunc(log, func(l string) bool { return strings.Contains(l, "incrementally") })
}

// TestIncrementalSameAsFullSample: the real sample as a yearly feed and
// the real change pair as the modified feed of two days; the second day
// built with -previous reads only the modified feed and writes what a
// full build writes, every file byte for byte; a third day whose
// modified feed is the first's again goes back, and one with EPSS too.
func TestIncrementalSameAsFullSample(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	yearly := copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json.gz")
	day := func(n int, modified string) []string {
		d := filepath.Join(dir, "day"+string(rune('0'+n)))
		return []string{yearly, copyAs(t, sharedPath(t, modified), d, "nvdcve-2.0-modified.json.gz")}
	}
	first := BuildOptions{CWECatalog: cwe, Feeds: day(1, "nvd/changes/before.json.gz"), Out: filepath.Join(dir, "s1"),
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)

	second := first
	second.Feeds, second.Previous, second.Time = day(2, "nvd/changes/after.json.gz"), first.Out, first.Time.Add(2*time.Hour)
	if log := incrementalAndFull(t, second); !incremental(log) {
		t.Errorf("the second day was not built incrementally: %q", log)
	}
	second.Out = filepath.Join(dir, "s2")
	buildLogged(t, second)

	// Back to the first day's modified feed: its CVEs' newer records
	// drop out, and the yearly feed's or the older ones win again.
	third := second
	third.Feeds, third.Previous, third.Time = day(3, "nvd/changes/before.json.gz"), second.Out, second.Time.Add(2*time.Hour)
	third.EPSS = sharedPath(t, "epss/epss-sample.csv")
	third.Force = true // records go back in time, which the guard refuses
	log := incrementalAndFull(t, third)
	t.Logf("third day: %q", log)
}

// TestIncrementalDroppedRecord: a CVE whose record came last from the
// modified feed alone, and which the next modified feed no longer holds,
// falls back to what the yearly feed holds, which the previous snapshot
// does not know: the build reads every feed and says why; when the
// yearly feed held the same record, it is carried over.
func TestIncrementalDroppedRecord(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	feed := string(realFeed(t))
	const id = `"id": "CVE-2024-5732"`
	if !strings.Contains(feed, id) {
		// The sample's ids as written.
		t.Skip("sample layout changed")
	}
	recs := sampleRecords(t, feed)
	if len(recs) < 3 {
		t.Fatalf("the sample has %d records", len(recs))
	}
	doc := func(rs ...string) []byte {
		return []byte(`{"resultsPerPage":0,"startIndex":0,"totalResults":0,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-21T00:00:00.000","vulnerabilities":[` + strings.Join(rs, ",") + `]}`)
	}
	// newer is recs[0] modified later, with its description edited.
	newer := touch(t, recs[0], "2026-11-20T10:00:00.000")
	run := func(name string, yearly []string, modified1, modified2 []string) []string {
		d := filepath.Join(dir, name)
		y := writeAs(t, doc(yearly...), d, "nvdcve-2.0-2024.json")
		m1 := writeAs(t, doc(modified1...), filepath.Join(d, "1"), "nvdcve-2.0-modified.json")
		m2 := writeAs(t, doc(modified2...), filepath.Join(d, "2"), "nvdcve-2.0-modified.json")
		first := BuildOptions{CWECatalog: cwe, Feeds: []string{y, m1}, Out: filepath.Join(d, "s1"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
		buildLogged(t, first)
		next := first
		next.Feeds, next.Previous, next.Time = []string{y, m2}, first.Out, first.Time.Add(2*time.Hour)
		next.Force = true // a record may go back in time, which the guard refuses
		return incrementalAndFull(t, next)
	}
	// The yearly feed holds the old record, the first modified feed the
	// newer one, the second none.
	log := run("stale", []string{recs[0], recs[1], recs[2]}, []string{newer, recs[2]}, []string{recs[2]})
	if incremental(log) || !slices.ContainsFunc(log, func(l string) bool {
		return strings.HasPrefix(l, "full build: ") && strings.Contains(l, "last came from a feed that changed")
	}) {
		t.Errorf("a record dropped from the modified feed was not read from the yearly feed again, or the log does not say why: %q", log)
	}
	// The yearly feed holds the newer record too: carried over.
	log = run("fresh", []string{newer, recs[1], recs[2]}, []string{newer, recs[2]}, []string{recs[2]})
	if !incremental(log) {
		t.Errorf("not incremental: %q", log)
	}
	// The same lastModified in both, other bytes: not known.
	other := strings.Replace(newer, `"lang": "en", "value": "`, `"lang": "en", "value": "Edited. `, 1)
	if other == newer {
		t.Fatal("no English description to edit")
	}
	log = run("clash", []string{other, recs[1], recs[2]}, []string{newer, recs[2]}, []string{recs[2]})
	if incremental(log) {
		t.Errorf("incremental although the yearly feed holds another record of the same lastModified: %q", log)
	}
	// A new record in the second modified feed, and one newer again.
	newest := touch(t, recs[1], "2026-11-21T07:00:00.000")
	log = run("newer", []string{recs[0], recs[1], recs[2]}, []string{newer, recs[2]}, []string{touch(t, recs[0], "2026-11-21T07:00:00.000"), newest})
	if !incremental(log) {
		t.Errorf("not incremental: %q", log)
	}
}

// sampleRecords are the "vulnerabilities" elements of an NVD feed, as
// written.
func sampleRecords(t *testing.T, feed string) []string {
	t.Helper()
	var out []string
	err := decodeFeed(strings.NewReader(feed), "sample", func(fr *feedRecord) error {
		out = append(out, `{"cve":`+string(fr.nvd.Raw)+`}`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// touch gives a record (a "vulnerabilities" element) another
// lastModified.
func touch(t *testing.T, rec, modified string) string {
	t.Helper()
	i := strings.Index(rec, `"lastModified": "`)
	if i < 0 {
		t.Fatalf("no lastModified in %.80s", rec)
	}
	i += len(`"lastModified": "`)
	j := strings.IndexByte(rec[i:], '"')
	return rec[:i] + modified + rec[i+j:]
}

// TestIncrementalFallbacks: a build with -previous reads every feed, and
// says why, when the feeds are not those -previous was built from, or
// CVE JSON 5 records are among the inputs and not among -previous's;
// the snapshot is the same.
func TestIncrementalFallbacks(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	yearly := copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), dir, "nvdcve-2.0-2024.json.gz")
	before := copyAs(t, sharedPath(t, "nvd/changes/before.json.gz"), dir, "nvdcve-2.0-modified.json.gz")
	after := copyAs(t, sharedPath(t, "nvd/changes/after.json.gz"), filepath.Join(dir, "2"), "nvdcve-2.0-modified.json.gz")
	first := BuildOptions{CWECatalog: cwe, Feeds: []string{yearly, before}, Out: filepath.Join(dir, "s1"),
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)
	for _, tc := range []struct {
		name  string
		feeds []string
		why   string
	}{
		{"a feed more", []string{yearly, before, after}, "the previous snapshot was built from 3 inputs, this build reads 3 feeds"},
		{"another order", []string{after, yearly}, "feed 1 is nvdcve-2.0-modified.json.gz, the previous snapshot's was nvdcve-2.0-2024.json.gz"},
		{"records", []string{yearly, after, sharedPath(t, "cve5/cvelistV5-sample.json.gz")}, "the previous snapshot was built without CVE JSON 5 records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := first
			opt.Feeds, opt.Previous, opt.Time, opt.Force = tc.feeds, first.Out, first.Time.Add(time.Hour), true
			log := incrementalAndFull(t, opt)
			if want := "full build: not incremental: " + tc.why; !slices.Contains(log, want) || incremental(log) {
				t.Errorf("log %q, want %q", log, want)
			}
		})
	}
}

// smallCatalog writes a CWE catalog of no entry into dir: the builds of
// these tests are about the feeds.
func smallCatalog(t *testing.T, dir string) string {
	return writeAs(t, []byte(cweCatalogXML(`<Weaknesses/><Categories></Categories><Views/>`)), dir, "cwec_small.xml")
}

// TestNVDFromLines: a build of format 8 says in nvdfrom.txt.zst, a line
// per NVD record in nvd.zst's order, which inputs hold the winning
// record byte for byte ("1 3"), "c" when another input holds another
// record of the same lastModified, "-" when not known (a lastModified
// finer than the millisecond, which the stored facts do not keep);
// Validate refuses a line that names no feed, which Load never reads
// (it checks the file's sums).
func TestNVDFromLines(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	x := record("CVE-2024-0001", "2024-02-01T00:00:00.000", "x")
	a := mustWrite(t, filepath.Join(dir, "a.json"), feed(x, record("CVE-2024-0002", "2024-02-01T00:00:00.000", "y"),
		record("CVE-2024-0004", "2024-02-01T00:00:00.000", "w old")))
	b := mustWrite(t, filepath.Join(dir, "b.json"), feed(record("CVE-2024-0003", "2024-02-01T00:00:00.000", "z"), x,
		record("CVE-2024-0005", "2024-02-01T00:00:00.000123", "sub-millisecond")))
	c := mustWrite(t, filepath.Join(dir, "c.json"), feed(record("CVE-2024-0002", "2024-02-01T00:00:00.000", "y other"),
		record("CVE-2024-0004", "2024-03-01T00:00:00.000", "w new")))
	out := filepath.Join(dir, "snap")
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{a, b, c}, Out: out, Time: buildTime})
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != FormatVersion || m.Files[keyNVDFrom].Name != "nvdfrom.txt.zst" || m.Files[keyNVDFrom].Records != 5 {
		t.Fatalf("version %d, %+v", m.Version, m.Files[keyNVDFrom])
	}
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(out, fileNVDFrom))
	text, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// nvd.zst's order: published (all the same), then the CVE's number.
	if want := "1 2\nc\n2\n3\n-\n"; string(text) != want {
		t.Errorf("%s:\n%s\nwant\n%s", fileNVDFrom, text, want)
	}
	if _, err := Validate(out); err != nil {
		t.Fatal(err)
	}
	bad := []byte("1 2\nc\n0\n3\n-\n")
	setChunks(t, out, keyNVDFrom, [][]byte{zstdFrame(t, bad)}, []int64{int64(len(bad))}, []int{5})
	if _, err := Validate(out); err == nil || !strings.Contains(err.Error(), fileNVDFrom+": chunk 1: record 3: input 0 is not a feed of the 4 inputs") {
		t.Errorf("Validate of a line naming the CWE catalog: %v", err)
	}
	if _, _, err := Load(out); err != nil {
		t.Errorf("Load reads %s: %v", fileNVDFrom, err)
	}
	// Load checks its sums, as those of the other files it does not read.
	flipped := filepath.Join(dir, "flipped")
	if err := os.CopyFS(flipped, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(filepath.Join(flipped, fileNVDFrom))
	raw[len(raw)/2] ^= 1
	os.WriteFile(filepath.Join(flipped, fileNVDFrom), raw, 0o644)
	if _, _, err := Load(flipped); err == nil || !strings.Contains(err.Error(), fileNVDFrom+": chunk 1: sha256") {
		t.Errorf("Load of a flipped byte in %s: %v", fileNVDFrom, err)
	}
	// A snapshot that does not say where some record came from is
	// carried over by no build: it reads every feed and says why.
	bad = []byte("1 2\nc\n2\n3\n-\n")
	setChunks(t, out, keyNVDFrom, [][]byte{zstdFrame(t, bad)}, []int64{int64(len(bad))}, []int{5})
	c2 := mustWrite(t, filepath.Join(dir, "c2", "c.json"), feed(record("CVE-2024-0004", "2024-04-01T00:00:00.000", "w newer")))
	log := buildLogged(t, BuildOptions{CWECatalog: cwe, Feeds: []string{a, b, c2}, Out: filepath.Join(dir, "next"), Previous: out, Time: buildTime.Add(time.Hour)})
	if !slices.Contains(log, "full build: not incremental: the previous snapshot does not say which feed 1 NVD record came from") {
		t.Errorf("log: %q", log)
	}
}

// TestIncrementalCarriesBodies: a build with -previous of this format
// decodes only the previous versions of the CVEs that changed and of
// those whose EPSS score moved (for the diff), carrying the others'
// bodies over as stored, and writes what a full build writes, byte for
// byte, EPSS alerts on unchanged CVEs included.
func TestIncrementalCarriesBodies(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	yearly := copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json.gz")
	before := copyAs(t, sharedPath(t, "nvd/changes/before.json.gz"), filepath.Join(dir, "1"), "nvdcve-2.0-modified.json.gz")
	after := copyAs(t, sharedPath(t, "nvd/changes/after.json.gz"), filepath.Join(dir, "2"), "nvdcve-2.0-modified.json.gz")
	cves, err := ReadFeeds([]string{yearly, before})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(cves, func(a, b index.CVE) int { return strings.Compare(a.Name, b.Name) })
	// Scores for 40 CVEs; the next day, 10 of them moved by 0.4.
	epss := func(day string, moved int) []byte {
		var b strings.Builder
		b.WriteString("#model_version:v2026.06.15,score_date:" + day + "T12:00:00Z\ncve,epss,percentile\n")
		for k, c := range cves[:40] {
			score := "0.10000"
			if k < moved {
				score = "0.50000"
			}
			b.WriteString(c.Name + "," + score + ",0.50000\n")
		}
		return []byte(b.String())
	}
	first := BuildOptions{CWECatalog: cwe, Feeds: []string{yearly, before}, Out: filepath.Join(dir, "s1"),
		EPSS: writeAs(t, epss("2026-11-20", 0), filepath.Join(dir, "1"), "epss_scores-2026-11-20.csv"),
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)

	second := first
	second.Feeds, second.Previous, second.Time = []string{yearly, after}, first.Out, first.Time.Add(2*time.Hour)
	second.EPSS = writeAs(t, epss("2026-11-21", 10), filepath.Join(dir, "2"), "epss_scores-2026-11-21.csv")
	log := incrementalAndFull(t, second)
	if !incremental(log) {
		t.Fatalf("not incremental: %q", log)
	}
	i := slices.IndexFunc(log, func(l string) bool { return strings.HasPrefix(l, "diff: ") })
	var alerts, decoded, of int
	if i < 0 {
		t.Fatalf("no diff stage: %q", log)
	}
	if _, err := fmt.Sscanf(log[i], "diff: %d alerts, %d previous CVEs decoded of %d", &alerts, &decoded, &of); err != nil {
		t.Fatalf("the diff stage does not say how many previous CVEs it decoded: %q (%v)", log[i], err)
	}
	if of != len(cves) || decoded >= of || decoded < 10 {
		t.Errorf("decoded %d previous CVEs of %d (%d in the previous snapshot): want the changed ones and the 10 whose score moved", decoded, of, len(cves))
	}
	second.Out = filepath.Join(dir, "s2")
	buildLogged(t, second)
	s, err := Read(second.Out)
	if err != nil {
		t.Fatal(err)
	}
	scored := 0
	for _, r := range s.Data.Reports {
		for _, a := range r.Alerts {
			for _, e := range a.Events {
				if e.Type == index.EventEPSSChanged {
					scored++
				}
			}
		}
	}
	if scored != 10 {
		t.Errorf("%d EPSS alerts, want 10", scored)
	}
}

// TestBodyStamp: the name and dates read off a stored body without
// decoding it are those decoding it gives, escapes in the texts
// included; a body of another shape is decoded whole.
func TestBodyStamp(t *testing.T) {
	for _, c := range []index.CVE{
		{Name: "CVE-2024-0001", Summary: `a "quoted" \ summary, {"name":"x"}`, CreatedAt: "2024-01-01T00:00:00Z", UpdatedAt: "2024-02-01T00:00:00Z"},
		{Name: "CVE-2024-0002", Summary: "", CreatedAt: "2024-01-01T00:00:00Z", UpdatedAt: "2024-01-01T00:00:00Z"},
		{Name: "CVE-2024-0003", Summary: "é\u2028\x01", CreatedAt: "a\"b", UpdatedAt: `c\d`},
	} {
		var got index.CVE
		if err := bodyStamp(index.EncodeCVE(&c), &got); err != nil {
			t.Fatal(err)
		}
		if want := (index.CVE{Name: c.Name, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}); !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
	var got index.CVE
	if err := bodyStamp([]byte(`{"updated_at":"u","name":"CVE-2024-0004","created_at":"c"}`), &got); err != nil || got.Name != "CVE-2024-0004" || got.UpdatedAt != "u" || got.CreatedAt != "c" {
		t.Errorf("another shape: %+v, %v", got, err)
	}
	if err := bodyStamp([]byte(`{"name":"CVE-2024-0005"`), &got); err == nil {
		t.Error("a cut body read")
	}
}
