package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sort"
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
