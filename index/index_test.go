package index

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

func TestHumanName(t *testing.T) {
	for in, want := range map[string]string{
		"ubuntu_linux":       "Ubuntu Linux",
		"pan-os":             "Pan-os",
		"microsoft":          "Microsoft",
		"IOS_XE":             "Ios Xe",
		"a__b":               "A  B",
		"_x":                 " X",
		"notepad++":          "Notepad++",
		"logo!_soft_comfort": "Logo! Soft Comfort",
		"élan_ü":             "Élan Ü",
		"":                   "",
	} {
		if got := HumanName(in); got != want {
			t.Errorf("HumanName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBandOf(t *testing.T) {
	for score, want := range map[float64]Band{
		0: BandNone, 0.1: BandLow, 3.9: BandLow, 4.0: BandMedium, 6.9: BandMedium, 7.0: BandHigh, 8.9: BandHigh, 9.0: BandCritical, 9.8: BandCritical, 10: BandCritical,
	} {
		if got := bandOf(score); got != want {
			t.Errorf("bandOf(%v) = %v, want %v", score, got, want)
		}
	}
}

func TestListPages(t *testing.T) {
	items := [][]byte{[]byte(`1`), []byte(`2`), []byte(`3`), []byte(`4`), []byte(`5`)}
	l := direct(items)
	sub := indirect(items, []int32{4, 2, 0})
	for _, tc := range []struct {
		l          List
		page, size int
		want       string
	}{
		{l, 1, 2, `[1,2]`}, {l, 3, 2, `[5]`}, {l, 4, 2, `[]`}, {l, 1, 20, `[1,2,3,4,5]`},
		{l, 0, 2, `[]`}, {l, 1_000_000, 20, `[]`},
		{sub, 1, 2, `[5,3]`}, {sub, 2, 2, `[1]`}, {sub, 3, 2, `[]`},
		{indirect(items, nil), 1, 20, `[]`}, {List{}, 1, 20, `[]`},
	} {
		if got := string(tc.l.AppendPage(nil, tc.page, tc.size)); got != tc.want {
			t.Errorf("page %d size %d: %s, want %s", tc.page, tc.size, got, tc.want)
		}
	}
	// An open list's items are objects whose closing brace is added as
	// they are appended.
	// Each is cut to its first cut[k] bytes.
	objs := [][]byte{[]byte(`{"a":1,"more":2}`), []byte(`{"b":"}","c":[]}`)}
	open := List{src: objs, cut: []uint32{6, 8}, ids: []int32{1, 0}, sub: true}
	if got := string(open.AppendPage(nil, 1, 20)); got != `[{"b":"}"},{"a":1}]` {
		t.Errorf("open list: %s", got)
	}
	open.cut = nil
	if got := string(open.AppendPage(nil, 1, 20)); got != `[{"b":"}","c":[]},{"a":1,"more":2}]` {
		t.Errorf("open list uncut: %s", got)
	}
	// A packed list, whole, in part, and a slice of it.
	var pk packed
	for _, it := range items {
		pk.add(it)
	}
	for _, tc := range []struct {
		l          List
		page, size int
		want       string
	}{
		{List{pk: pk}, 1, 20, `[1,2,3,4,5]`}, {List{pk: pk}, 2, 2, `[3,4]`},
		{List{pk: pk, ids: []int32{4, 0}, sub: true}, 1, 20, `[5,1]`},
		{List{pk: pk.slice(1, 4)}, 1, 20, `[2,3,4]`},
		{List{pk: pk.slice(1, 4), ids: []int32{2, 0}, sub: true}, 1, 20, `[4,2]`},
		{List{pk: pk.slice(2, 2)}, 1, 20, `[]`},
		{List{pk: joinPacked([]packed{pk.slice(3, 5), {}, pk.slice(0, 1)})}, 1, 20, `[4,5,1]`},
	} {
		if got := string(tc.l.AppendPage(nil, tc.page, tc.size)); got != tc.want {
			t.Errorf("packed page %d size %d: %s, want %s", tc.page, tc.size, got, tc.want)
		}
	}
	if got := string(sub.AppendAll([]byte("x"))); got != `x[5,3,1]` {
		t.Errorf("AppendAll kept prefix wrong: %s", got)
	}
}

func cve(name, updated string, cpes ...CPE) CVE {
	return CVE{Name: name, Summary: name, CreatedAt: "2020-01-01 00:00:00Z", UpdatedAt: updated, CPEs: cpes}
}

func TestBuildOrderAndRelations(t *testing.T) {
	p := func(v, prod, ver string) CPE {
		return CPE{URI: "u:" + v + prod + ver, Vendor: v, Product: prod, Version: ver}
	}
	d := &Data{
		CWEs: []CWE{{Name: "CWE-200"}, {Name: "CWE-20"}, {Name: "CWE-1000"}},
		CVEs: []CVE{
			cve("CVE-2024-9999", "2024-05-01 00:00:00Z", p("b", "x", "1.10"), p("b", "x", "1.9")),
			cve("CVE-2024-10000", "2024-05-01 00:00:00Z", p("a", "y", "*"), p("b", "x", "-")),
			cve("CVE-2023-50000", "2024-05-01 00:00:00Z"),
			cve("CVE-2025-0001", "2024-04-30 23:59:59Z", p("*", "z", "1"), p("c", "*", "1")),
			cve("CVE-1999-0001", "2025-01-01 00:00:00Z", p("b", "w", "2.0a"), p("b", "w", "2.0")),
		},
	}
	d.CVEs[0].CWEs = []string{"CWE-20", "CWE-9999"}
	d.CVEs[4].CWEs = []string{"CWE-20"}
	ix, err := Build(d, Meta{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	names := func(l List) []string { return listNames(t, l) }
	check := func(what string, want, got []string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("all CVEs", []string{"CVE-1999-0001", "CVE-2024-10000", "CVE-2024-9999", "CVE-2023-50000", "CVE-2025-0001"}, names(ix.CVEs(BandNone).List))
	check("CWEs", []string{"CWE-20", "CWE-200", "CWE-1000"}, names(ix.CWEs()))
	l, err := ix.CWECVEs("cwe-20")
	check("CWE-20 CVEs", []string{"CVE-1999-0001", "CVE-2024-9999"}, names(l.List))
	if _, err2 := ix.CWECVEs("CWE-9999"); err != nil || err2 != ErrCWENotFound {
		t.Errorf("CWE lookups: %v %v", err, err2)
	}
	check("vendors", []string{"a", "b", "c"}, names(ix.Vendors()))
	vl, _ := ix.VendorCVEs("b")
	check("vendor b CVEs", []string{"CVE-1999-0001", "CVE-2024-10000", "CVE-2024-9999"}, names(vl.List))
	pl, _ := ix.Products("b")
	check("products of b", []string{"w", "x"}, names(pl))
	pl, _ = ix.Products("c")
	check("products of c", []string{}, names(pl))
	body, _ := ix.Product("b", "x")
	if string(body) != `{"name":"x","human_name":"X","versions":["1.9","1.10"]}` {
		t.Errorf("product b/x: %s", body)
	}
	body, _ = ix.Product("b", "w")
	if string(body) != `{"name":"w","human_name":"W","versions":["2.0","2.0a"]}` {
		t.Errorf("product b/w: %s", body)
	}
	body, _ = ix.Vendor("b")
	if string(body) != `{"name":"b","human_name":"B","products":["w","x"]}` {
		t.Errorf("vendor b: %s", body)
	}
	if _, err := ix.Product("b", "nope"); err != ErrProductNotFound {
		t.Error("missing product of a known vendor")
	}
	if _, err := ix.Product("nope", "x"); err != ErrVendorNotFound {
		t.Error("missing vendor reported as known")
	}
	if c := ix.Counts(); c.CVEs != 5 || c.CWEs != 3 || c.Vendors != 3 || c.Products != 3 {
		t.Errorf("counts %+v", c)
	}
}

func TestBuildRejectsBadData(t *testing.T) {
	day := "2024-01-01 00:00:00Z"
	for _, tc := range []struct {
		name string
		d    *Data
		want string
	}{
		{"duplicate CVE", &Data{CVEs: []CVE{cve("CVE-2024-0001", day), cve("CVE-2024-0001", "2024-01-02 00:00:00Z")}}, "duplicate CVE-2024-0001"},
		{"bad CVE name", &Data{CVEs: []CVE{cve("CVE-24-1", day)}}, `name "CVE-24-1" is not CVE-<year>-<number>`},
		{"lower-case CVE", &Data{CVEs: []CVE{cve("cve-2024-1", day)}}, `name "cve-2024-1" is not CVE-<year>-<number>`},
		{"bad updated_at", &Data{CVEs: []CVE{cve("CVE-2024-0001", "2024-01-01T00:00:00Z")}}, `updated_at "2024-01-01T00:00:00Z" is not YYYY-MM-DD HH:MM:SSZ`},
		{"bad CWE name", &Data{CWEs: []CWE{{Name: "CWE-07"}}}, `CWE name "CWE-07"`},
		{"duplicate CWE", &Data{CWEs: []CWE{{Name: "CWE-7"}, {Name: "CWE-7"}}}, "duplicate CWE-7"},
		{"report no id", &Data{Reports: []Report{{}}}, "report without id"},
		{"duplicate rep", &Data{Reports: []Report{{ID: "a"}, {ID: "a"}}}, `duplicate report "a"`},
		{"alert twice", &Data{Reports: []Report{{ID: "a", Alerts: []Alert{{ID: 1}}}, {ID: "b", Alerts: []Alert{{ID: 1}}}}}, "alert id 1 in reports"},
		{"bad event type", &Data{Reports: []Report{{ID: "a", Alerts: []Alert{{ID: 1, Events: []Event{{Type: "Nope", Details: json.RawMessage(`{}`)}}}}}}}, `unknown event type "Nope"`},
		{"bad details", &Data{Reports: []Report{{ID: "a", Alerts: []Alert{{ID: 1, Events: []Event{{Type: EventNewCVE, Details: json.RawMessage(`[1]`)}}}}}}}, "details are not a JSON object"},
	} {
		_, err := Build(tc.d, Meta{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", tc.name, err, tc.want)
		}
	}
}

func TestLookupsAreCaseInsensitiveForCVEAndCWE(t *testing.T) {
	ix, err := Build(&Data{CVEs: []CVE{cve("CVE-2021-44228", "2021-12-10 10:15:09Z")}, CWEs: []CWE{{Name: "CWE-79"}}}, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"CVE-2021-44228", "cve-2021-44228", "Cve-2021-44228"} {
		if b, err := ix.CVE(n); err != nil || !strings.Contains(string(b), `"CVE-2021-44228"`) {
			t.Errorf("CVE(%q) not found", n)
		}
	}
	for _, n := range []string{"CVE-2021-4422", "CVE-2021-442280", strings.Repeat("a", 100), "CVE-2021-44228\x00", "ÇVE-2021-44228"} {
		if _, err := ix.CVE(n); err != ErrCVENotFound {
			t.Errorf("CVE(%q) found", n)
		}
	}
	if _, err := ix.CWE("cwe-79"); err != nil {
		t.Error("cwe-79 not found")
	}
}
