package index_test

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// sampleFeed is the real NVD sample beside the repository.
var sampleFeed = filepath.Join("..", "..", "shared", "data", "nvd", "nvdcve-2.0-sample.json.gz")

// sampleConfigurations decodes the configurations of every CVE of the NVD
// sample, by name, as a source of ExplainSources would give them.
func sampleConfigurations(t testing.TB) map[string][]index.Configuration {
	t.Helper()
	f, err := os.Open(sampleFeed)
	if err != nil {
		t.Fatalf("real test data missing: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var feed struct {
		Vulnerabilities []struct {
			CVE struct {
				ID             string                `json:"id"`
				Configurations []index.Configuration `json:"configurations"`
			} `json:"cve"`
		} `json:"vulnerabilities"`
	}
	if err := json.NewDecoder(z).Decode(&feed); err != nil {
		t.Fatal(err)
	}
	out := map[string][]index.Configuration{}
	for _, v := range feed.Vulnerabilities {
		out[v.CVE.ID] = v.CVE.Configurations
	}
	return out
}

// sampleIndex builds the NVD sample, with its configurations as the
// explain source when withConfigs is set.
func sampleIndex(t testing.TB, cfgs map[string][]index.Configuration) *index.Index {
	t.Helper()
	cves, err := loader.ReadFeeds([]string{sampleFeed})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Build(&index.Data{CVEs: cves}, index.Meta{ID: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	if cfgs != nil {
		ix.SetExplainSources(index.ExplainSources{Configurations: func(name string) ([]index.Configuration, bool) {
			c, ok := cfgs[name]
			return c, ok
		}})
	}
	return ix
}

// explainJSON is the whole explained list as JSON, decoded generically.
func explainJSON(t *testing.T, l index.ExplainList) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(l.AppendPage(nil, 1, 1000), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func wantJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad golden: %v", err)
	}
	return v
}

// TestExplainANDConfiguration explains Chrome versions of the real
// sample, whose Chrome CVEs, in list order (lastModified newest first),
// are (configuration index, its operator, node 0's OR entry):
//
//	CVE-2019-8075 (2023-11-07) config 3 AND: chrome * < 87.0.4280.66, node 1:
//	                           linux_kernel:- and windows:- (vulnerable false);
//	                           config 4 AND: chrome * < 87.0.4280.67, node 1:
//	                           macos:- (vulnerable false)
//	CVE-2023-4863 (2023-10-28) config 0 (no operator): chrome * < 116.0.5845.187
//	CVE-2023-1234 (2023-03-10T20:22:25) config 0 AND: chrome * < 111.0.5563.64,
//	                           node 1: android:- (vulnerable false)
//	CVE-2023-1235 (20:16:56), CVE-2023-1236 (20:16:41) config 0 (no operator):
//	                           chrome * < 111.0.5563.64
//	CVE-2009-3456 (2009)       * <= 3.0.195.21 and 0.2.149.27 ... 3.0.193.2:beta
//
// At 87.0.4280.66, 8075 holds only by config 4: Chrome only on macOS.
func TestExplainANDConfiguration(t *testing.T) {
	ix := sampleIndex(t, sampleConfigurations(t))
	l, err := ix.ProductExplainAt("google", "chrome", "87.0.4280.66")
	if err != nil {
		t.Fatal(err)
	}
	const chromeAny = "cpe:2.3:a:google:chrome:*:*:*:*:*:*:*:*"
	nvd := func(cfg int, endExcl string, platforms string) string {
		return `{"source":"nvd","configuration":` + string(rune('0'+cfg)) + `,"node":0,"operator":"OR","negate":false,` +
			`"criteria":"` + chromeAny + `","rule":"range","version":null,` +
			`"version_start_including":null,"version_start_excluding":null,"version_end_including":null,` +
			`"version_end_excluding":"` + endExcl + `","platforms":[` + platforms + `]}`
	}
	want := wantJSON(t, `[
		{"name":"CVE-2019-8075","matched_by":[`+nvd(4, "87.0.4280.67", `"cpe:2.3:o:apple:macos:-:*:*:*:*:*:*:*"`)+`]},
		{"name":"CVE-2023-4863","matched_by":[`+nvd(0, "116.0.5845.187", ``)+`]},
		{"name":"CVE-2023-1234","matched_by":[`+nvd(0, "111.0.5563.64", `"cpe:2.3:o:google:android:-:*:*:*:*:*:*:*"`)+`]},
		{"name":"CVE-2023-1235","matched_by":[`+nvd(0, "111.0.5563.64", ``)+`]},
		{"name":"CVE-2023-1236","matched_by":[`+nvd(0, "111.0.5563.64", ``)+`]}
	]`)
	if diff := cmp.Diff(want, explainJSON(t, l)); diff != "" {
		t.Errorf("google/chrome at 87.0.4280.66 (-want +got):\n%s", diff)
	}

	// One below, config 3 holds too: on Linux or Windows.
	l, err = ix.ProductExplainAt("google", "chrome", "87.0.4280.65")
	if err != nil {
		t.Fatal(err)
	}
	got := explainJSON(t, l).([]any)[0]
	want = wantJSON(t, `{"name":"CVE-2019-8075","matched_by":[`+
		nvd(3, "87.0.4280.66", `"cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*","cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"`)+","+
		nvd(4, "87.0.4280.67", `"cpe:2.3:o:apple:macos:-:*:*:*:*:*:*:*"`)+`]}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CVE-2019-8075 at 87.0.4280.65 (-want +got):\n%s", diff)
	}

	// CVE-2009-3456's concrete 3.0.193.2 with update beta is
	// 3.0.193.2-beta; its * <= 3.0.195.21 covers it too (a pre-release
	// is itself against a bound that is not its release). It is last in
	// the list, below the five above, whose ranges all hold too.
	l, err = ix.ProductExplainAt("google", "chrome", "3.0.193.2-beta")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"CVE-2019-8075", "CVE-2023-4863", "CVE-2023-1234", "CVE-2023-1235", "CVE-2023-1236", "CVE-2009-3456"}, l.Names()); diff != "" {
		t.Errorf("google/chrome at 3.0.193.2-beta (-want +got):\n%s", diff)
	}
	want = wantJSON(t, `{"name":"CVE-2009-3456","matched_by":[
		{"source":"nvd","configuration":0,"node":0,"operator":"OR","negate":false,"criteria":"`+chromeAny+`",
		 "rule":"range","version":null,"version_start_including":null,"version_start_excluding":null,
		 "version_end_including":"3.0.195.21","version_end_excluding":null,"platforms":[]},
		{"source":"nvd","configuration":0,"node":0,"operator":"OR","negate":false,
		 "criteria":"cpe:2.3:a:google:chrome:3.0.193.2:beta:*:*:*:*:*:*",
		 "rule":"version","version":"3.0.193.2-beta","version_start_including":null,"version_start_excluding":null,
		 "version_end_including":null,"version_end_excluding":null,"platforms":[]}
	]}`)
	if diff := cmp.Diff(want, explainJSON(t, l).([]any)[5]); diff != "" {
		t.Errorf("google/chrome at 3.0.193.2-beta (-want +got):\n%s", diff)
	}
}

// TestExplainWithoutConfigurations: with no source of configurations,
// the entries come from the CVE's cpes, their configuration, node and
// platforms null.
func TestExplainWithoutConfigurations(t *testing.T) {
	ix := sampleIndex(t, nil)
	l, err := ix.ProductExplainAt("google", "chrome", "111.0.5563.63")
	if err != nil {
		t.Fatal(err)
	}
	// 8075's ends (87.0.4280.66 and .67) are below; 4863, 1234, 1235 and
	// 1236 hold.
	item := func(name, endExcl string) string {
		return `{"name":"` + name + `","matched_by":[{"source":"nvd","configuration":null,"node":null,"operator":null,"negate":null,` +
			`"criteria":"cpe:2.3:a:google:chrome:*:*:*:*:*:*:*:*","rule":"range","version":null,` +
			`"version_start_including":null,"version_start_excluding":null,"version_end_including":null,` +
			`"version_end_excluding":"` + endExcl + `","platforms":null}]}`
	}
	want := wantJSON(t, "["+item("CVE-2023-4863", "116.0.5845.187")+","+item("CVE-2023-1234", "111.0.5563.64")+","+
		item("CVE-2023-1235", "111.0.5563.64")+","+item("CVE-2023-1236", "111.0.5563.64")+"]")
	if diff := cmp.Diff(want, explainJSON(t, l)); diff != "" {
		t.Errorf("google/chrome at 111.0.5563.63 (-want +got):\n%s", diff)
	}
	if _, err := ix.ProductExplainAt("google", "nope", "1"); err != index.ErrProductNotFound {
		t.Errorf("unknown product: %v, want ErrProductNotFound", err)
	}
	if _, err := ix.ProductExplainAt("nope", "chrome", "1"); err != index.ErrVendorNotFound {
		t.Errorf("unknown vendor: %v, want ErrVendorNotFound", err)
	}
}

// TestExplainAgreesWithProductCVEsAt: for every vulnerable vendor and
// product of the sample and many versions (each concrete version and
// bound, and neighbours of them), explain lists exactly the CVEs of
// ProductCVEsAt, each with some entry, and of all the product's CVEs
// only those have an entry covering the version, from the
// configurations and from the cpes alike.
func TestExplainAgreesWithProductCVEsAt(t *testing.T) {
	cfgs := sampleConfigurations(t)
	type key struct{ vendor, product string }
	versions := map[key][]string{}
	add := func(k key, v string) {
		if v != "" && v != "*" && v != "-" {
			v = strings.ReplaceAll(v, `\`, "")
			versions[k] = append(versions[k], v, v+".1", v+"-rc1", v+"a", v+".0")
		}
	}
	for _, cs := range cfgs {
		for _, c := range cs {
			for _, n := range c.Nodes {
				for _, m := range n.CPEMatch {
					parts := strings.Split(m.Criteria, ":") // no escaped colon in the sample's
					if !m.Vulnerable || len(parts) < 7 {
						continue
					}
					k := key{parts[3], parts[4]}
					v := parts[5]
					if parts[6] != "*" && parts[6] != "-" {
						add(k, v+"-"+parts[6])
					}
					add(k, v)
					add(k, m.VersionStartIncluding)
					add(k, m.VersionStartExcluding)
					add(k, m.VersionEndIncluding)
					add(k, m.VersionEndExcluding)
					versions[k] = append(versions[k], "0", "99999")
				}
			}
		}
	}
	withCfgs, withCPEs := sampleIndex(t, cfgs), sampleIndex(t, nil)
	n := 0
	for k, vs := range versions {
		all, err := withCfgs.ProductCVEs(k.vendor, k.product)
		if err != nil {
			continue // an escaped name: not this test's
		}
		var allNames []string
		var items []struct{ Name string }
		if err := json.Unmarshal(all.AppendAll(nil), &items); err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			allNames = append(allNames, it.Name)
		}
		slices.Sort(vs)
		for _, v := range slices.Compact(vs) {
			at, err := withCfgs.ProductCVEsAt(k.vendor, k.product, v)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			var atItems []struct{ Name string }
			if err := json.Unmarshal(at.AppendAll(nil), &atItems); err != nil {
				t.Fatal(err)
			}
			for _, it := range atItems {
				want = append(want, it.Name)
			}
			for _, ix := range []*index.Index{withCfgs, withCPEs} {
				l, err := ix.ProductExplainAt(k.vendor, k.product, v)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, l.Names()); diff != "" {
					t.Fatalf("%s/%s at %q: names (-ProductCVEsAt +explain):\n%s", k.vendor, k.product, v, diff)
				}
				for i := range l.Len() {
					if e := l.At(i); len(e.MatchedBy) == 0 {
						t.Errorf("%s/%s at %q: %s explained by nothing", k.vendor, k.product, v, e.Name)
					}
				}
			}
			// Of all the product's CVEs, exactly those have a covering
			// entry in their configurations.
			covered := []string{}
			for _, name := range allNames {
				if len(index.ExplainConfigurations(cfgs[name], k.vendor, k.product, v)) > 0 {
					covered = append(covered, name)
				}
			}
			if diff := cmp.Diff(want, covered); diff != "" {
				t.Fatalf("%s/%s at %q: (-ProductCVEsAt +covering configurations):\n%s", k.vendor, k.product, v, diff)
			}
			n++
		}
	}
	if n < 1000 {
		t.Errorf("only %d versions asked", n)
	}
}

// TestExplainEntriesCVE20235631 explains the CNA entry of CVE-2023-5631
// (Roundcube, ../shared/data/cve5), whose version objects are, in order:
//
//	0: 1.6.0 lessThan 1.6.3 affected    3: 1.6.4 unaffected
//	1: 1.5.0 lessThan 1.5.4 affected    4: 1.5.5 unaffected
//	2: 1.4.0 lessThan 1.5.14 affected   5: 1.5.15 unaffected
//
// default status unaffected. 1.5.3 is matched by object 1 (0 starts at
// 1.6.0), 1.5.10 by object 2 (1 ends before it), 1.6.1 by object 0; 1.6.4
// falls past 0, 1 and 2 and object 3 makes it unaffected, 1.3 is below
// every range (default unaffected): neither is explained.
func TestExplainEntriesCVE20235631(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "cve5", "cvelistV5-sample.json.gz")
	var entries []index.AffectedEntry
	err := loader.ReadCVE5(path, func(r *loader.CVE5Record) error {
		if r.ID == "CVE-2023-5631" {
			entries = r.Affected
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("%d entries, want the CNA's one", len(entries))
	}
	aliases, err := loader.DefaultAliases()
	if err != nil {
		t.Fatal(err)
	}
	has := func(e *index.AffectedEntry) bool {
		return slices.Contains(loader.EntryKeys(e, aliases), loader.ProductKey{Vendor: "roundcube", Product: "roundcubemail"})
	}
	obj := func(i int) *int { return &i }
	for _, tc := range []struct {
		version string
		want    []index.EntryMatch
	}{
		{"1.5.3", []index.EntryMatch{{Source: "cna", Entry: 0, VersionObject: obj(1), Rule: index.RuleLessThan, Status: "affected"}}},
		{"1.5.10", []index.EntryMatch{{Source: "cna", Entry: 0, VersionObject: obj(2), Rule: index.RuleLessThan, Status: "affected"}}},
		{"1.6.1", []index.EntryMatch{{Source: "cna", Entry: 0, VersionObject: obj(0), Rule: index.RuleLessThan, Status: "affected"}}},
		{"1.6.3-rc1", nil}, // lessThan 1.6.3: a pre-release counts as 1.6.3
		{"1.6.4", nil},
		{"1.3", nil},
	} {
		got := index.ExplainEntries(entries, has, tc.version)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("at %s (-want +got):\n%s", tc.version, diff)
		}
		for _, m := range got {
			if s := entries[m.Entry].StatusAt(tc.version); s != m.Status {
				t.Errorf("at %s: StatusAt %s, explained %s", tc.version, s, m.Status)
			}
		}
	}
	if got := index.ExplainEntries(entries, func(*index.AffectedEntry) bool { return false }, "1.5.3"); got != nil {
		t.Errorf("another product: %v, want none", got)
	}
}

// TestDecodeConfigurations reads the configurations of an NVD cve object
// as published (CVE-2023-24256's, from the sample), and refuses one that
// is not JSON.
func TestDecodeConfigurations(t *testing.T) {
	const rec = `{"id": "CVE-2023-24256", "configurations": [{"operator": "AND", "nodes": [
		{"operator": "OR", "negate": false, "cpeMatch": [{"vulnerable": true, "criteria": "cpe:2.3:o:nio:aspen:*:*:*:*:*:*:*:*", "versionEndExcluding": "3.3.0", "matchCriteriaId": "ED1710E5-777B-4A84-B01A-7C10D218C249"}]},
		{"operator": "OR", "negate": false, "cpeMatch": [{"vulnerable": false, "criteria": "cpe:2.3:h:nio:ec6:-:*:*:*:*:*:*:*", "matchCriteriaId": "3049828B-B772-4371-972A-E35267BE14F5"}]}]}]}`
	got, err := index.DecodeConfigurations([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	want := []index.Configuration{{Operator: "AND", Nodes: []index.Node{
		{Operator: "OR", CPEMatch: []index.CPEMatch{{Vulnerable: true, Criteria: "cpe:2.3:o:nio:aspen:*:*:*:*:*:*:*:*", VersionEndExcluding: "3.3.0"}}},
		{Operator: "OR", CPEMatch: []index.CPEMatch{{Criteria: "cpe:2.3:h:nio:ec6:-:*:*:*:*:*:*:*"}}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// nio/aspen 3.2 on the EC6 only.
	m := index.ExplainConfigurations(got, "nio", "aspen", "3.2")
	if len(m) != 1 || !slices.Equal(m[0].Platforms, []string{"cpe:2.3:h:nio:ec6:-:*:*:*:*:*:*:*"}) {
		t.Errorf("nio/aspen 3.2: %+v, want one match on the EC6", m)
	}
	if _, err := index.DecodeConfigurations([]byte(`{"configurations": {`)); err == nil {
		t.Error("a broken record: no error")
	}
}
