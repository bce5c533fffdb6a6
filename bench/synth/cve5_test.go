package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/loader"
)

// dirDigest is one SHA-256 over the names and contents of the files of
// dir, by name.
func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	files := readDir(t, dir)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		h.Write([]byte(n + "\x00"))
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeCfg(t *testing.T, cfg Config) string {
	t.Helper()
	dir := t.TempDir()
	p, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecordsOffUnchanged: without CVE JSON 5 records the data set is
// byte for byte the one synth wrote before it could write them (digests
// taken with commit 2f08522, the last one before): the NVD feeds, the
// catalog and the EPSS file, base and next day.
func TestRecordsOffUnchanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{CVEs: 3000, Seed: 7}, "8d16625a6ccbf0a446cdb9ada7d4bb6c609591ab5cbab9d4a8347e7358e56641"},
		{Config{CVEs: 3000, Seed: 7, Next: true, ChangeRate: 0.05}, "ff85cc373aab1c627949be14e4a6d065e2abd65de2c51628449681524811305f"},
	} {
		if got := dirDigest(t, writeCfg(t, tc.cfg)); got != tc.want {
			t.Errorf("%+v: digest %s, want %s", tc.cfg, got, tc.want)
		}
	}
}

// cve5Set is a data set with records, read back: the records through the
// product's loader, the feed records by id, and each id's index.
type cve5Set struct {
	plan  *Plan
	dir   string
	recs  map[string]*loader.CVE5Record
	feed  map[string]tCVE
	index map[string]int
}

func readCVE5Set(t *testing.T, cfg Config) *cve5Set {
	t.Helper()
	p, err := NewPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	recs, _, err := loader.ReadCVE5Files([]string{filepath.Join(dir, CVE5Name)})
	if err != nil {
		t.Fatalf("the loader does not read the records: %v", err)
	}
	set := &cve5Set{plan: p, dir: dir, recs: map[string]*loader.CVE5Record{}, feed: map[string]tCVE{}, index: map[string]int{}}
	for _, r := range recs {
		set.recs[r.ID] = r
	}
	for y := firstYear; y <= lastYear; y++ {
		for _, v := range readFeed(t, filepath.Join(dir, FeedName(y))).Vulnerabilities {
			set.feed[v.CVE.ID] = v.CVE
		}
	}
	g := p.Generator()
	for i := range p.Total() {
		set.index[g.core(i).id] = i
	}
	return set
}

// nvdKeys are the vendor/product keys of the vocabulary, as NVD names
// them in the feeds' CPEs.
func nvdKeys(p *Plan) map[string]bool {
	out := map[string]bool{}
	for _, pr := range p.voc.products {
		out[p.voc.vendors[pr.vendor].name+"/"+pr.name] = true
	}
	return out
}

// testVersions are versions the truth says are affected: its explicit
// versions and the included bounds of its ranges. A range's start that
// is a pre-release of its end ([5.2-alpha1, 5.2)) is left out: by the
// decisions' pre-release rule, lessThan 5.2 does not cover 5.2-alpha1.
func testVersions(ms []truthMatch) []string {
	var out []string
	for _, m := range ms {
		switch {
		case !m.isRange():
			if m.version != "-" && m.version != "*" {
				out = append(out, m.version)
			}
		default:
			for _, v := range []string{m.si, m.ei} {
				if v != "" && !(m.ee != "" && strings.HasPrefix(v, m.ee+"-")) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// TestCVE5Records: the loader reads every record; one per CVE of the
// feeds, rejected alike; a third of the CVEs (the -awaiting share, on top
// of those NVD leaves without configurations anyway) have no
// configurations; most of those get a vendor and product from their
// records, most of them NVD's own names (some through the default alias
// file); and whatever an entry names, it says affected every version the
// truth (NVD's analysis, given or to come) says is.
func TestCVE5Records(t *testing.T) {
	t.Parallel()
	set := readCVE5Set(t, Config{CVEs: 3000, Seed: 7, CVE5: true, Awaiting: DefaultAwaiting})
	if len(set.recs) != len(set.feed) || len(set.recs) != 3000 {
		t.Fatalf("%d records, %d CVEs in the feeds, want 3000 each", len(set.recs), len(set.feed))
	}
	aliases, err := loader.DefaultAliases()
	if err != nil {
		t.Fatal(err)
	}
	known := nvdKeys(set.plan)
	g := set.plan.Generator()
	var live, noConf, keyed, nvdNamed, viaAlias, checked, entriesFor, missingFor int
	for id, rec := range set.recs {
		c, ok := set.feed[id]
		if !ok {
			t.Fatalf("%s: a record for no CVE of the feeds", id)
		}
		if (rec.State == "REJECTED") != (c.VulnStatus == "Rejected") {
			t.Errorf("%s: record %s, feed %s", id, rec.State, c.VulnStatus)
		}
		if rec.State == "REJECTED" {
			continue
		}
		live++
		keys := map[string]bool{}
		for k := range rec.Affected {
			e := &rec.Affected[k]
			for _, key := range loader.EntryKeys(e, aliases) {
				keys[key.String()] = true
				if len(e.CPEs) == 0 && e.Vendor != nil && e.Product != nil &&
					loader.NormalizeName(*e.Vendor)+"/"+loader.NormalizeName(*e.Product) != key.String() {
					viaAlias++
				}
			}
		}
		if len(c.Configurations) == 0 {
			noConf++
			if len(keys) > 0 {
				keyed++
			}
			for k := range keys {
				if known[k] {
					nvdNamed++
					break
				}
			}
		}
		// The entries against the truth.
		s := g.core(set.index[id])
		for _, tp := range g.truthProducts(&s, g.truth(&s)) {
			key := tp.v.name + "/" + tp.p.name
			var es []int
			for k := range rec.Affected {
				for _, ek := range loader.EntryKeys(&rec.Affected[k], aliases) {
					if ek.String() == key {
						es = append(es, k)
					}
				}
			}
			if len(es) == 0 {
				missingFor++
				continue
			}
			entriesFor++
			for _, x := range testVersions(tp.matches) {
				checked++
				affected := false
				for _, k := range es {
					affected = affected || rec.Affected[k].StatusAt(x) == "affected"
				}
				if !affected {
					t.Errorf("%s: %s %s is affected (NVD's analysis) but no entry says so: %+v", id, key, x, rec.Affected)
				}
			}
		}
	}
	share := float64(noConf) / float64(live)
	t.Logf("%d live CVEs, %.3f without configurations; of those %.3f keyed by their records, %.3f under an NVD name; %d keys through aliases; products of the truth: %d named by entries, %d not; %d versions checked",
		live, share, float64(keyed)/float64(noConf), float64(nvdNamed)/float64(noConf), viaAlias, entriesFor, missingFor, checked)
	if share < 0.28 || share > 0.38 {
		t.Errorf("share of live CVEs without configurations %.3f, want about a third (0.28-0.38)", share)
	}
	if f := float64(keyed) / float64(noConf); f < 0.75 {
		t.Errorf("%.3f of the CVEs without configurations keyed by their records, want >= 0.75", f)
	}
	if f := float64(nvdNamed) / float64(noConf); f < 0.7 {
		t.Errorf("%.3f of the CVEs without configurations under an NVD product name, want >= 0.7", f)
	}
	if viaAlias == 0 {
		t.Error("no entry keyed through the default alias file")
	}
	if f := float64(entriesFor) / float64(entriesFor+missingFor); f < 0.6 {
		t.Errorf("%.3f of the truth's products named by an entry, want >= 0.6", f)
	}
	if checked < 1000 {
		t.Errorf("only %d versions checked", checked)
	}
}

// zipRecords reads the records' zip of dir raw: each entry's bytes by
// name, in archive order.
func zipRecords(t *testing.T, dir string) (names []string, files map[string][]byte) {
	t.Helper()
	zr, err := zip.OpenReader(filepath.Join(dir, CVE5Name))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files = map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
		files[f.Name] = b
	}
	return names, files
}

// rawRecord is what the shape test reads of a record.
type rawRecord struct {
	DataType    string `json:"dataType"`
	DataVersion string `json:"dataVersion"`
	Metadata    struct {
		ID            string `json:"cveId"`
		State         string `json:"state"`
		DatePublished string `json:"datePublished"`
		DateUpdated   string `json:"dateUpdated"`
	} `json:"cveMetadata"`
	Containers struct {
		CNA rawContainer   `json:"cna"`
		ADP []rawContainer `json:"adp"`
	} `json:"containers"`
}

type rawContainer struct {
	ProviderMetadata struct {
		ShortName string `json:"shortName"`
	} `json:"providerMetadata"`
	Descriptions    []tLang `json:"descriptions"`
	RejectedReasons []tLang `json:"rejectedReasons"`
	References      []struct {
		URL string `json:"url"`
	} `json:"references"`
	Affected []struct {
		Vendor        string   `json:"vendor"`
		Product       string   `json:"product"`
		CPEs          []string `json:"cpes"`
		Repo          string   `json:"repo"`
		DefaultStatus string   `json:"defaultStatus"`
		Versions      []struct {
			Version         string            `json:"version"`
			Status          string            `json:"status"`
			VersionType     string            `json:"versionType"`
			LessThan        string            `json:"lessThan"`
			LessThanOrEqual string            `json:"lessThanOrEqual"`
			Changes         []json.RawMessage `json:"changes"`
		} `json:"versions"`
	} `json:"affected"`
	Metrics []struct {
		Other *struct {
			Type string `json:"type"`
		} `json:"other"`
	} `json:"metrics"`
}

var cve5PathPattern = regexp.MustCompile(`^cves/(\d{4})/(\d+)xxx/(CVE-(\d{4})-(\d{4,}))\.json$`)

// TestCVE5Shape: the zip is laid out as cvelistV5 (cves/YYYY/NNxxx/ID.json,
// by id) and its records look like real ones: CVE JSON 5.1 with what a
// published or rejected record must have, and a mix of what CNAs write
// close to that of the real records of ../shared/data/cve5 (version
// objects without versionType, semver, custom and git; comparisons;
// lessThanOrEqual; changes; n/a vendors; the kernel CNA's
// original_commit_for_fix rows; CISA's ADP with SSVC on most CVEs
// published since 2024, and with cpes on some).
func TestCVE5Shape(t *testing.T) {
	t.Parallel()
	dir := writeCfg(t, Config{CVEs: 3000, Seed: 7, CVE5: true, Awaiting: DefaultAwaiting})
	names, files := zipRecords(t, dir)
	if len(names) != 3000 {
		t.Fatalf("%d records, want 3000", len(names))
	}
	if !sort.StringsAreSorted(names) {
		// cvelistV5's own order; ids sort within a directory.
		t.Log("entries not in name order (ids of different widths)")
	}
	types := map[string]int{}
	count := map[string]int{}
	var objs, recent, recentSSVC int
	for _, name := range names {
		m := cve5PathPattern.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("entry %q is not cves/YYYY/NNxxx/CVE-YYYY-N.json", name)
		}
		var rec rawRecord
		if err := json.Unmarshal(files[name], &rec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		num, _ := strconv.Atoi(m[5])
		if rec.Metadata.ID != m[3] || m[1] != m[4] || m[2] != strconv.Itoa(num/1000) {
			t.Fatalf("%s holds %s", name, rec.Metadata.ID)
		}
		if rec.DataType != "CVE_RECORD" || rec.DataVersion != "5.1" {
			t.Fatalf("%s: dataType %q dataVersion %q", name, rec.DataType, rec.DataVersion)
		}
		if rec.Metadata.DateUpdated < rec.Metadata.DatePublished {
			t.Errorf("%s: updated %s before published %s", name, rec.Metadata.DateUpdated, rec.Metadata.DatePublished)
		}
		cna := &rec.Containers.CNA
		if rec.Metadata.State == "REJECTED" {
			count["rejected"]++
			if len(cna.RejectedReasons) == 0 || len(cna.Affected) > 0 {
				t.Errorf("%s: a rejected record needs rejectedReasons and nothing affected", name)
			}
			continue
		}
		if len(cna.Descriptions) == 0 || len(cna.Affected) == 0 || len(cna.References) == 0 {
			t.Errorf("%s: a published record needs descriptions, affected and references", name)
		}
		if strings.HasPrefix(rec.Metadata.DatePublished, "2024") || strings.HasPrefix(rec.Metadata.DatePublished, "2025") {
			recent++
		}
		for _, a := range cna.Affected {
			if strings.EqualFold(a.Vendor, "n/a") {
				count["vendor n/a"]++
			}
			if a.Repo != "" {
				count["repo"]++
			}
			for _, v := range a.Versions {
				objs++
				types[v.VersionType]++
				switch {
				case strings.ContainsAny(v.Version[:1], "<>="):
					count["comparison"]++
				case v.LessThanOrEqual != "":
					count["lessThanOrEqual"]++
				}
				if len(v.Changes) > 0 {
					count["changes"]++
				}
				if v.Status == "unaffected" {
					count["unaffected"]++
				}
			}
		}
		for _, adp := range rec.Containers.ADP {
			if adp.ProviderMetadata.ShortName != "CISA-ADP" {
				count["adp "+adp.ProviderMetadata.ShortName]++
				continue
			}
			count["adp CISA-ADP"]++
			for _, a := range adp.Affected {
				if len(a.CPEs) > 0 {
					count["adp cpes"]++
				}
			}
			for _, mt := range adp.Metrics {
				if mt.Other != nil && mt.Other.Type == "ssvc" {
					count["ssvc"]++
					if strings.HasPrefix(rec.Metadata.DatePublished, "2024") || strings.HasPrefix(rec.Metadata.DatePublished, "2025") {
						recentSSVC++
					}
				}
			}
		}
	}
	t.Logf("%d version objects: types %v; %v; SSVC on %d of %d records published 2024-2025", objs, types, count, recentSSVC, recent)
	for _, vt := range []string{"", "semver", "custom", "git", "original_commit_for_fix"} {
		if types[vt] == 0 {
			t.Errorf("no version object of versionType %q", vt)
		}
	}
	// The real records: 161 of 405 CNA objects without versionType, 132
	// semver, 74 custom, 31 git.
	for _, vt := range []string{"", "semver", "custom"} {
		if f := float64(types[vt]) / float64(objs); f < 0.08 {
			t.Errorf("versionType %q on %.3f of the objects, want >= 0.08", vt, f)
		}
	}
	for _, k := range []string{"rejected", "vendor n/a", "repo", "comparison", "lessThanOrEqual", "changes", "unaffected",
		"adp CISA-ADP", "adp cpes", "ssvc", "adp CVE"} {
		if count[k] == 0 {
			t.Errorf("no %s", k)
		}
	}
	if f := float64(recentSSVC) / float64(recent); f < 0.6 {
		t.Errorf("SSVC on %.3f of the records published in 2024-2025, want >= 0.6", f)
	}
}

// TestCVE5Deterministic: the same flags give the same bytes, records
// and next day included; and records with no backlog drawn leave the
// NVD feeds, catalog and EPSS file those of a data set without records.
func TestCVE5Deterministic(t *testing.T) {
	t.Parallel()
	cfg := Config{CVEs: 1000, Seed: 7, CVE5: true, Awaiting: DefaultAwaiting, Next: true, ChangeRate: 0.05, AnalysedRate: DefaultAnalysedRate}
	if a, b := dirDigest(t, writeCfg(t, cfg)), dirDigest(t, writeCfg(t, cfg)); a != b {
		t.Errorf("two runs with the same flags differ: %s, %s", a, b)
	}
	dir := writeCfg(t, Config{CVEs: 3000, Seed: 7, CVE5: true})
	if err := os.Remove(filepath.Join(dir, CVE5Name)); err != nil {
		t.Fatal(err)
	}
	if got, want := dirDigest(t, dir), "8d16625a6ccbf0a446cdb9ada7d4bb6c609591ab5cbab9d4a8347e7358e56641"; got != want {
		t.Errorf("-cve5 -awaiting 0: the other files' digest %s, want that without records %s", got, want)
	}
}

// TestCVE5Next: the next day with records. Every base record is
// byte-identical but those whose CNA or ADP changed something (their NVD
// record's CNA side, or new versions found affected: cve5Changed), which
// are updated on 2026-11-22; the new CVEs have records and no NVD
// configurations; a share of the backlog is analysed: configurations
// in the feed (Analyzed), the record as it was; some records' entries
// change, which the loader sees.
func TestCVE5Next(t *testing.T) {
	t.Parallel()
	base := readCVE5Set(t, Config{CVEs: 3000, Seed: 7, CVE5: true, Awaiting: DefaultAwaiting})
	cfg := Config{CVEs: 3000, Seed: 7, CVE5: true, Awaiting: DefaultAwaiting, Next: true, ChangeRate: 0.05, AnalysedRate: 0.2}
	next := readCVE5Set(t, cfg)
	_, baseFiles := zipRecords(t, base.dir)
	names, nextFiles := zipRecords(t, next.dir)
	if len(names) != next.plan.Total() || next.plan.Total() != 3003 {
		t.Fatalf("%d records on the next day, want %d", len(names), next.plan.Total())
	}
	g := next.plan.Generator()
	var changed, newVersions, entriesChanged, backlog, analysed, analysedChanged int
	for _, name := range names {
		id := strings.TrimSuffix(name[strings.LastIndexByte(name, '/')+1:], ".json")
		i := next.index[id]
		old, ok := baseFiles[name]
		if i >= 3000 {
			if ok {
				t.Errorf("%s: a new CVE with a base record", id)
			}
			if c := next.feed[id]; len(c.Configurations) > 0 || !strings.HasPrefix(next.recs[id].Updated, "2026-11-22") {
				t.Errorf("%s: a new CVE with configurations, or not updated on 2026-11-22 (%s)", id, next.recs[id].Updated)
			}
			continue
		}
		s, _ := g.record(i)
		want := s.cnaChanged || next.plan.cve5Changed(i)
		got := !bytes.Equal(old, nextFiles[name])
		if got != want {
			t.Errorf("%s: record changed %v, want %v (CNA side changed %v, new versions %v)", id, got, want, s.cnaChanged, next.plan.cve5Changed(i))
		}
		if got {
			changed++
			if u := next.recs[id].Updated; !strings.HasPrefix(u, "2026-11-22") {
				t.Errorf("%s: changed, updated %s, want 2026-11-22", id, u)
			}
		}
		if next.plan.cve5Changed(i) {
			newVersions++
			if a, b := base.recs[id].Affected, next.recs[id].Affected; !reflect.DeepEqual(a, b) {
				entriesChanged++
			}
		}
		if s.backlog && !s.rejected && len(base.feed[id].Configurations) == 0 {
			backlog++
			if c := next.feed[id]; len(c.Configurations) > 0 {
				analysed++
				if c.VulnStatus != "Analyzed" || c.LastModified < "2026-11-22" {
					t.Errorf("%s: analysed, status %s, lastModified %s", id, c.VulnStatus, c.LastModified)
				}
				if got {
					analysedChanged++
				}
			}
		}
	}
	t.Logf("%d base records changed (%d with new versions, %d of whose entries changed); backlog %d, %d analysed (%d of whose records changed)",
		changed, newVersions, entriesChanged, backlog, analysed, analysedChanged)
	if newVersions == 0 || entriesChanged < newVersions/2 {
		t.Errorf("%d records with new versions, %d with changed entries", newVersions, entriesChanged)
	}
	if f := float64(analysed) / float64(backlog); f < 0.1 || f > 0.35 {
		t.Errorf("%.3f of the backlog analysed, want about 0.2", f)
	}
	if changed < 150 {
		t.Errorf("only %d records changed", changed)
	}
}

// TestCVE5Flags: -awaiting and -analysed-rate need -cve5 (and -next),
// shares outside 0..1 are refused with one line; a good run writes the
// zip, and no zip without -cve5.
func TestCVE5Flags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-o", dir, "-cves", "10", "-awaiting", "0.5"},
		{"-o", dir, "-cves", "10", "-next", "-analysed-rate", "0.5"},
		{"-o", dir, "-cves", "10", "-cve5", "-analysed-rate", "0.5"},
		{"-o", dir, "-cves", "10", "-cve5", "-awaiting", "1.5"},
		{"-o", dir, "-cves", "10", "-cve5", "-awaiting", "NaN"},
		{"-o", dir, "-cves", "10", "-cve5", "-next", "-analysed-rate", "-0.1"},
		{"-o", dir, "-cves", "10", "-cve5=perhaps"},
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
	if code := run([]string{"-o", dir, "-cves", "40"}, &stdout, &stderr); code != 0 {
		t.Fatalf("good run returned %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, CVE5Name)); !os.IsNotExist(err) {
		t.Errorf("without -cve5: %s exists (%v)", CVE5Name, err)
	}
	if code := run([]string{"-o", dir, "-cves", "40", "-cve5", "-awaiting", "0.5", "-next", "-analysed-rate", "0.5"}, &stdout, &stderr); code != 0 {
		t.Fatalf("good run returned %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, CVE5Name)); err != nil {
		t.Error(err)
	}
}

// Rules of the CVE Record Format (cve-schema,
// schema/docs/CVE_Record_Format_bundled.json) that the records could
// break, checked by hand: the schema itself is not vendored here.
var (
	uuid4Pattern  = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}$`)
	cweIDPattern  = regexp.MustCompile(`^CWE-[1-9][0-9]*$`)
	timePattern   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)
	referenceTags = map[string]bool{"broken-link": true, "customer-entitlement": true, "exploit": true, "government-resource": true,
		"issue-tracking": true, "mailing-list": true, "mitigation": true, "not-applicable": true, "patch": true,
		"permissions-required": true, "media-coverage": true, "product": true, "related": true, "release-notes": true,
		"signature": true, "technical-description": true, "third-party-advisory": true, "vendor-advisory": true, "vdb-entry": true}
	cve5Statuses = map[string]bool{"affected": true, "unaffected": true, "unknown": true}
)

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func onlyKeys(m map[string]any, allowed ...string) bool {
	for k := range m {
		if !slicesContains(allowed, k) {
			return false
		}
	}
	return true
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// unique reports whether the JSON values are pairwise different.
func unique(xs []any) bool {
	seen := map[string]bool{}
	for _, x := range xs {
		b, _ := json.Marshal(x)
		if seen[string(b)] {
			return false
		}
		seen[string(b)] = true
	}
	return true
}

// schemaErrors lists what of one record breaks those rules.
func schemaErrors(raw []byte) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		return []string{err.Error()}
	}
	if !onlyKeys(rec, "dataType", "dataVersion", "cveMetadata", "containers") {
		fail("top-level keys %v", keysOf(rec))
	}
	meta, _ := rec["cveMetadata"].(map[string]any)
	state, _ := meta["state"].(string)
	allowed := []string{"cveId", "assignerOrgId", "assignerShortName", "requesterUserId", "dateUpdated", "serial", "dateReserved", "datePublished", "state"}
	if state == "REJECTED" {
		allowed = append(allowed, "dateRejected")
	}
	if !onlyKeys(meta, allowed...) || meta["cveId"] == nil || !uuid4Pattern.MatchString(fmt.Sprint(meta["assignerOrgId"])) {
		fail("cveMetadata %v", meta)
	}
	for _, k := range []string{"dateUpdated", "dateReserved", "datePublished", "dateRejected"} {
		if v, ok := meta[k]; ok && !timePattern.MatchString(fmt.Sprint(v)) {
			fail("cveMetadata.%s %v", k, v)
		}
	}
	conts, _ := rec["containers"].(map[string]any)
	cna, _ := conts["cna"].(map[string]any)
	var all []map[string]any
	all = append(all, cna)
	adps, _ := conts["adp"].([]any)
	if conts["adp"] != nil && (len(adps) == 0 || !unique(adps)) {
		fail("adp must be a non-empty array of unique containers")
	}
	for _, a := range adps {
		m, _ := a.(map[string]any)
		all = append(all, m)
		if len(m) < 2 {
			fail("an adp container with only %v", keysOf(m))
		}
	}
	if state == "REJECTED" {
		if !onlyKeys(cna, "providerMetadata", "rejectedReasons", "replacedBy") || cna["rejectedReasons"] == nil {
			fail("rejected cna %v", keysOf(cna))
		}
	} else {
		for _, k := range []string{"providerMetadata", "descriptions", "affected", "references"} {
			if cna[k] == nil {
				fail("published cna without %s", k)
			}
		}
	}
	for _, c := range all {
		pm, _ := c["providerMetadata"].(map[string]any)
		short := fmt.Sprint(pm["shortName"])
		if !onlyKeys(pm, "orgId", "shortName", "dateUpdated") || !uuid4Pattern.MatchString(fmt.Sprint(pm["orgId"])) || len(short) < 2 || len(short) > 32 {
			fail("providerMetadata %v", pm)
		}
		if !onlyKeys(c, "providerMetadata", "title", "descriptions", "rejectedReasons", "affected", "problemTypes", "metrics", "references") {
			fail("container keys %v", keysOf(c))
		}
		refs, _ := c["references"].([]any)
		if c["references"] != nil && (len(refs) == 0 || !unique(refs)) {
			fail("references must be a non-empty array of unique references")
		}
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			tags, _ := ref["tags"].([]any)
			if !onlyKeys(ref, "url", "name", "tags") || ref["tags"] != nil && (len(tags) == 0 || !unique(tags)) {
				fail("reference %v", ref)
			}
			for _, tag := range tags {
				if s := fmt.Sprint(tag); !referenceTags[s] && !strings.HasPrefix(s, "x_") {
					fail("reference tag %q", s)
				}
			}
		}
		pts, _ := c["problemTypes"].([]any)
		for _, p := range pts {
			ds, _ := p.(map[string]any)["descriptions"].([]any)
			for _, d := range ds {
				dm, _ := d.(map[string]any)
				if dm["lang"] == nil || dm["description"] == nil || dm["cweId"] != nil && !cweIDPattern.MatchString(fmt.Sprint(dm["cweId"])) {
					fail("problemType %v", dm)
				}
			}
		}
		ms, _ := c["metrics"].([]any)
		for _, x := range ms {
			m, _ := x.(map[string]any)
			if m["cvssV4_0"] == nil && m["cvssV3_1"] == nil && m["cvssV3_0"] == nil && m["cvssV2_0"] == nil && m["other"] == nil {
				fail("metric %v", keysOf(m))
			}
			if v4, ok := m["cvssV4_0"].(map[string]any); ok && !onlyKeys(v4, "version", "vectorString", "baseScore", "baseSeverity") {
				fail("cvssV4_0 with keys outside FIRST's base fields: %v", keysOf(v4))
			}
			if o, ok := m["other"].(map[string]any); ok {
				content, _ := o["content"].(map[string]any)
				if o["type"] == nil || len(content) == 0 {
					fail("other %v", o)
				}
			}
		}
		affs, _ := c["affected"].([]any)
		if c["affected"] != nil && len(affs) == 0 {
			fail("empty affected")
		}
		for _, a := range affs {
			e, _ := a.(map[string]any)
			if !(e["vendor"] != nil && e["product"] != nil || e["collectionURL"] != nil && e["packageName"] != nil) {
				fail("entry names no vendor and product nor package: %v", keysOf(e))
			}
			if e["versions"] == nil && e["defaultStatus"] == nil {
				fail("entry with neither versions nor defaultStatus")
			}
			if ds, ok := e["defaultStatus"]; ok && !cve5Statuses[fmt.Sprint(ds)] {
				fail("defaultStatus %v", ds)
			}
			vs, _ := e["versions"].([]any)
			if e["versions"] != nil && (len(vs) == 0 || !unique(vs)) {
				fail("versions must be a non-empty array of unique objects: %v", vs)
			}
			for _, x := range vs {
				v, _ := x.(map[string]any)
				_, lt := v["lessThan"]
				_, le := v["lessThanOrEqual"]
				_, vt := v["versionType"]
				switch {
				case !onlyKeys(v, "version", "status", "versionType", "lessThan", "lessThanOrEqual", "changes"),
					v["version"] == nil || fmt.Sprint(v["version"]) == "" || !cve5Statuses[fmt.Sprint(v["status"])],
					(lt || le) && !vt,
					!lt && !le && (v["changes"] != nil || len(v) > 3 || len(v) == 3 && !vt):
					fail("version object %v", v)
				}
				chs, _ := v["changes"].([]any)
				for _, ch := range chs {
					cm, _ := ch.(map[string]any)
					if !onlyKeys(cm, "at", "status") || cm["at"] == nil || !cve5Statuses[fmt.Sprint(cm["status"])] {
						fail("change %v", cm)
					}
				}
			}
		}
	}
	return errs
}

// TestCVE5Schema: every record of a base and a next day keeps the rules
// of the CVE Record Format that the generator could break.
func TestCVE5Schema(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{CVEs: 2000, Seed: 3, CVE5: true, Awaiting: DefaultAwaiting},
		{CVEs: 2000, Seed: 3, CVE5: true, Awaiting: DefaultAwaiting, Next: true, ChangeRate: 0.1, AnalysedRate: 0.2},
	} {
		names, files := zipRecords(t, writeCfg(t, cfg))
		bad := 0
		for _, name := range names {
			for _, e := range schemaErrors(files[name]) {
				if bad++; bad <= 20 {
					t.Errorf("%s: %s", name, e)
				}
			}
		}
		if bad > 20 {
			t.Errorf("... %d errors in all", bad)
		}
	}
}
