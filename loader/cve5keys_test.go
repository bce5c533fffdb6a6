package loader

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"Oracle Corporation": "oracle_corporation",
		"Linux":              "linux",
		"@babel/traverse":    "babel_traverse",
		"froxlor/froxlor":    "froxlor_froxlor",
		"Cisco Adaptive Security Appliance (ASA) Software": "cisco_adaptive_security_appliance_asa_software",
		"notepad-plus-plus":                   "notepad-plus-plus",
		"Red Hat Enterprise Linux 8":          "red_hat_enterprise_linux_8",
		"  __Spaced__  ":                      "spaced",
		"org.apache.logging.log4j:log4j-core": "org.apache.logging.log4j_log4j-core",
		"Appointment Booking Calendar Plugin and Online Scheduling Plugin – BookingPress": "appointment_booking_calendar_plugin_and_online_scheduling_plugin_bookingpress",
		"n/a":   "n_a",
		"***":   "",
		"":      "",
		"ÄÖÜ x": "x",
	} {
		if got := NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEntryKeys(t *testing.T) {
	def, err := DefaultAliases()
	if err != nil {
		t.Fatal(err)
	}
	k := func(v, p string) ProductKey { return ProductKey{v, p} }
	for _, tt := range []struct {
		name    string
		e       index.AffectedEntry
		aliases *Aliases
		want    []ProductKey
	}{
		// CVE-2024-47177's CISA-ADP entry: its CPE names the key.
		{"cpe 2.3", index.AffectedEntry{Vendor: sp("openprinting"), Product: sp("cpdb-libs"),
			CPEs: []string{"cpe:2.3:a:openprinting:cpdb-libs:*:*:*:*:*:*:*:*"}}, def, []ProductKey{k("openprinting", "cpdb-libs")}},
		{"cpe escaped", index.AffectedEntry{CPEs: []string{`cpe:2.3:a:notepad-plus-plus:notepad\+\+:*:*:*:*:*:*:*:*`}}, nil,
			[]ProductKey{k("notepad-plus-plus", "notepad++")}},
		{"cpe 2.2", index.AffectedEntry{CPEs: []string{"cpe:/o:RedHat:enterprise_linux:8", "cpe:/a:a%2fb:c"}}, nil,
			[]ProductKey{k("redhat", "enterprise_linux"), k("a/b", "c")}},
		{"cpes once each", index.AffectedEntry{CPEs: []string{"cpe:2.3:a:x:y:1:*:*:*:*:*:*:*", "cpe:2.3:a:x:y:2:*:*:*:*:*:*:*", "cpe:2.3:a:x:z:*:*:*:*:*:*:*:*"}}, nil,
			[]ProductKey{k("x", "y"), k("x", "z")}},
		// Aliases never apply to CPEs.
		{"no alias on cpes", index.AffectedEntry{Vendor: sp("Linux"), Product: sp("Linux"), CPEs: []string{"cpe:2.3:o:linux:linux:*:*:*:*:*:*:*:*"}}, def,
			[]ProductKey{k("linux", "linux")}},
		// CPEs that give no key: the names do.
		{"bad cpes", index.AffectedEntry{Vendor: sp("V"), Product: sp("P"), CPEs: []string{"cpe:2.3:a:*:p:*:*:*:*:*:*:*:*", "cpe:2.3:a:v:-:*:*:*:*:*:*:*:*", "nonsense", "cpe:/a"}}, nil,
			[]ProductKey{k("v", "p")}},
		// The kernel CNA's entry (CVE-2024-26581): linux/linux, aliased.
		{"kernel", index.AffectedEntry{Vendor: sp("Linux"), Product: sp("Linux")}, def, []ProductKey{k("linux", "linux_kernel")}},
		{"kernel, no aliases", index.AffectedEntry{Vendor: sp("Linux"), Product: sp("Linux")}, nil, []ProductKey{k("linux", "linux")}},
		// CVE-2025-1094: vendor n/a, no key unless an alias names the
		// product (the default file does).
		{"n/a vendor", index.AffectedEntry{Vendor: sp("n/a"), Product: sp("PostgreSQL")}, nil, nil},
		{"n/a vendor, aliased", index.AffectedEntry{Vendor: sp("n/a"), Product: sp("PostgreSQL")}, def, []ProductKey{k("postgresql", "postgresql")}},
		{"n/a product", index.AffectedEntry{Vendor: sp("V"), Product: sp(" N/A ")}, def, nil},
		{"unknown vendor", index.AffectedEntry{Vendor: sp("Unknown"), Product: sp("x")}, nil, nil},
		{"unspecified vendor", index.AffectedEntry{Vendor: sp("UNSPECIFIED"), Product: sp("x")}, nil, nil},
		{"dash vendor", index.AffectedEntry{Vendor: sp("-"), Product: sp("x")}, nil, nil},
		{"no vendor", index.AffectedEntry{Product: sp("x")}, nil, nil},
		{"empty", index.AffectedEntry{}, def, nil},
		{"symbols only", index.AffectedEntry{Vendor: sp("***"), Product: sp("x")}, nil, nil},
		{"dash once normalised", index.AffectedEntry{Vendor: sp("-!"), Product: sp("x")}, nil, nil},
		// packageName when there is no product (or one giving no key).
		{"packageName", index.AffectedEntry{Vendor: sp("Theme Blvd"), PackageName: sp("tweeple")}, nil, []ProductKey{k("theme_blvd", "tweeple")}},
		{"packageName for n/a", index.AffectedEntry{Vendor: sp("V"), Product: sp("n/a"), PackageName: sp("pkg")}, nil, []ProductKey{k("v", "pkg")}},
		{"product first", index.AffectedEntry{Vendor: sp("Red Hat"), Product: sp("Red Hat Enterprise Linux 8"), PackageName: sp("gtk3")}, def,
			[]ProductKey{k("redhat", "enterprise_linux")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := EntryKeys(&tt.e, tt.aliases)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestEntryKeysRealRecords gives the keys of the real records of the
// decisions' examples, with the default aliases.
func TestEntryKeysRealRecords(t *testing.T) {
	def, err := DefaultAliases()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*CVE5Record{}
	for _, name := range []string{"cvelistV5-sample.json.gz", "vulnrichment-sample.json.gz"} {
		for _, r := range readCVE5All(t, cve5Sample(t, name)) {
			byID[r.ID] = r
		}
	}
	keys := func(id string, a *Aliases) []string {
		var out []string
		for i := range byID[id].Affected {
			e := &byID[id].Affected[i]
			for _, k := range EntryKeys(e, a) {
				out = append(out, e.Source+" "+k.String())
			}
		}
		return out
	}
	for _, tt := range []struct {
		id      string
		aliases *Aliases
		want    []string
	}{
		// OpenPrinting/cups-filters normalised; CISA-ADP's CPE.
		{"CVE-2024-47177", def, []string{"cna openprinting/cups-filters", "adp:CISA-ADP openprinting/cpdb-libs"}},
		{"CVE-2023-5631", def, []string{"cna roundcube/roundcubemail"}},
		{"CVE-2025-1094", nil, nil},
		{"CVE-2025-1094", def, []string{"cna postgresql/postgresql"}},
		// Two entries of the kernel CNA, one key.
		{"CVE-2024-26581", def, []string{"cna linux/linux_kernel", "cna linux/linux_kernel"}},
		{"CVE-2017-3456", def, []string{"cna oracle/mysql"}},
	} {
		if diff := cmp.Diff(tt.want, keys(tt.id, tt.aliases)); diff != "" {
			t.Errorf("%s, %d aliases (-want +got):\n%s", tt.id, tt.aliases.Len(), diff)
		}
	}
}

func TestParseAliases(t *testing.T) {
	a, err := ParseAliases("a.txt", strings.NewReader(`
# a comment

Linux/Linux linux/linux_kernel # the kernel
	Oracle Corporation/MySQL_Server oracle/mysql
*/PostgreSQL postgresql/postgresql#no space before the reason
n/a/x v/x
`))
	if err == nil {
		t.Fatal("no error for a name with spaces")
	}
	if want := `loader: aliases a.txt:5: want cna-vendor/cna-product nvd-vendor/nvd-product, found 3 fields`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	a, err = ParseAliases("a.txt", strings.NewReader(`
# a comment

Linux/Linux linux/linux_kernel # the kernel
	oracle_corporation/MySQL_Server oracle/mysql
*/PostgreSQL postgresql/postgresql#no space before the reason
n/a/x v/x
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		vendor, product string
		want            string
	}{
		{"linux", "linux", "linux/linux_kernel"},
		{"oracle_corporation", "mysql_server", "oracle/mysql"},
		{"anything", "postgresql", "postgresql/postgresql"},
		{"", "postgresql", "postgresql/postgresql"},
		{"n", "a_x", "v/x"}, // the left side splits at its first "/"
		{"linux", "kernel", ""},
		{"oracle", "mysql_server", ""},
	} {
		k, ok := a.Lookup(tt.vendor, tt.product)
		if got := map[bool]string{true: k.String(), false: ""}[ok]; got != tt.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", tt.vendor, tt.product, got, tt.want)
		}
	}
	if a.Len() != 4 {
		t.Errorf("%d mappings, want 4", a.Len())
	}
	var none *Aliases
	if _, ok := none.Lookup("linux", "linux"); ok || none.Len() != 0 {
		t.Error("a nil *Aliases maps something")
	}

	for _, tt := range []struct{ text, want string }{
		{"a/b", "loader: aliases f:1: want cna-vendor/cna-product nvd-vendor/nvd-product, found 1 fields"},
		{"\n\na/b c/d e/f", "loader: aliases f:3: want cna-vendor/cna-product nvd-vendor/nvd-product, found 3 fields"},
		{"ab c/d", `loader: aliases f:1: want cna-vendor/cna-product nvd-vendor/nvd-product, found "ab c/d"`},
		{"a/b cd # why", `loader: aliases f:1: want cna-vendor/cna-product nvd-vendor/nvd-product, found "a/b cd"`},
		{"***/b c/d", `loader: aliases f:1: "***/b" names no vendor or no product once normalised`},
		{"a/ c/d", `loader: aliases f:1: "a/" names no vendor or no product once normalised`},
		{"a/b */d", `loader: aliases f:1: "*/d" is no NVD vendor and product`},
		{"a/b c/-", `loader: aliases f:1: "c/-" is no NVD vendor and product`},
		{"a/b c/", `loader: aliases f:1: "c/" is no NVD vendor and product`},
		{"# x\nA/B c/d\na/b e/f", "loader: aliases f:3: a/b is mapped already on line 2"},
		{"*/b c/d\n*/B e/f", "loader: aliases f:2: */b is mapped already on line 1"},
		{strings.Repeat("x", 2<<20), "loader: aliases f: bufio.Scanner: token too long"},
	} {
		_, err := ParseAliases("f", strings.NewReader(tt.text))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseAliases(%.30q) error %v, want %s", tt.text, err, tt.want)
		}
	}
}

// TestDefaultAliases checks the shipped alias file: it parses, every
// mapping has its reason, and it holds the decisions' example.
func TestDefaultAliases(t *testing.T) {
	a, err := DefaultAliases()
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := a.Lookup("linux", "linux"); !ok || k != (ProductKey{"linux", "linux_kernel"}) {
		t.Errorf("linux/linux -> %v, %v; want linux/linux_kernel", k, ok)
	}
	n := 0
	for i, line := range strings.Split(defaultAliasesText, "\n") {
		mapping, reason, _ := strings.Cut(line, "#")
		if strings.TrimSpace(mapping) == "" {
			continue
		}
		n++
		if strings.TrimSpace(reason) == "" {
			t.Errorf("aliases.txt:%d: no reason: %q", i+1, line)
		}
	}
	if n != a.Len() || n < 30 {
		t.Errorf("%d mapping lines, %d mappings", n, a.Len())
	}
}

func ExampleEntryKeys() {
	aliases, _ := DefaultAliases()
	vendor, product := "Linux", "Linux"
	fmt.Println(EntryKeys(&index.AffectedEntry{Vendor: &vendor, Product: &product}, aliases))
	// Output: [linux/linux_kernel]
}
