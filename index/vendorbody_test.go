package index

import (
	"testing"
)

// The API's vendor and product objects, as encode writes them: what
// appendNameSummary must write byte for byte.
type nameSummary struct {
	Name      string `json:"name"`
	HumanName string `json:"human_name"`
}

type vendorBody struct {
	Name      string   `json:"name"`
	HumanName string   `json:"human_name"`
	Products  []string `json:"products"`
}

type productBody struct {
	Name      string   `json:"name"`
	HumanName string   `json:"human_name"`
	Versions  []string `json:"versions"`
}

// TestVendorBodiesAsEncoded: the summaries and bodies of vendors and
// products written by hand are those encode writes of the API's objects,
// for names plain and not (quotes, backslashes, HTML characters, control
// characters, non-ASCII, invalid UTF-8, line separators).
func TestVendorBodiesAsEncoded(t *testing.T) {
	names := []string{"", "ubuntu_linux", "IOS_XE", "a__b", "_x", "x_", "notepad++", "logo!_soft_comfort", "élan_ü",
		`a"b`, `back\slash`, "<script>&amp;", "tab\there", "nl\nx", "del\x7f", "bad\xffutf8", "line\u2028sep", "~!@#$%^*()_+{}|:?`-=[];',./",
		"Z_zZ_0a", "1.2.3-rc1", "*", "-"}
	for _, name := range names {
		if got, want := string(appendNameSummary(nil, name, "", nil)), string(encode(nameSummary{name, HumanName(name)})); got != want {
			t.Errorf("summary of %q:\n got %s\nwant %s", name, got, want)
		}
		if got := len(appendNameSummary(nil, name, "", nil)); plainJSON(name) && got != summarySize(name, nil) {
			t.Errorf("summary of %q: %d bytes, summarySize says %d", name, got, summarySize(name, nil))
		}
		for _, items := range [][]string{{}, {name}, names, {"1.0", "2"}} {
			if got := len(appendNameSummary(nil, name, "versions", items)); plainJSON(name) && (len(items) != 1 || plainJSON(items[0])) && len(items) < 3 && got != summarySize(name, items) {
				t.Errorf("product %q %q: %d bytes, summarySize says %d", name, items, got, summarySize(name, items))
			}
			if got, want := string(appendNameSummary(nil, name, "products", items)), string(encode(vendorBody{name, HumanName(name), items})); got != want {
				t.Errorf("vendor %q:\n got %s\nwant %s", name, got, want)
			}
			if got, want := string(appendNameSummary([]byte("x"), name, "versions", items)), "x"+string(encode(productBody{name, HumanName(name), items})); got != want {
				t.Errorf("product %q:\n got %s\nwant %s", name, got, want)
			}
		}
	}
}
