package index_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// TestProductCVEsAtRealRecords asks for versions of products of the real
// NVD sample (../shared/data/nvd/nvdcve-2.0-sample.json.gz). Each answer
// was worked out by hand from the records' cpeMatch entries, quoted in
// the comments (version component, vulnerable flag, bounds), and is in
// list order: lastModified newest first (whole seconds), ties by CVE
// number highest first.
func TestProductCVEsAtRealRecords(t *testing.T) {
	feed := filepath.Join("..", "..", "shared", "data", "nvd", "nvdcve-2.0-sample.json.gz")
	if _, err := os.Stat(feed); err != nil {
		t.Fatalf("real test data missing: %v (the tests read NVD samples from ../shared/data beside the repository)", err)
	}
	cves, err := loader.ReadFeeds([]string{feed})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Build(&index.Data{CVEs: cves}, index.Meta{ID: "sample"})
	if err != nil {
		t.Fatal(err)
	}

	// apache/log4j, every entry vulnerable; list order:
	//   CVE-2022-23307 (2026-06-17T04:29:50.500) * [1.2, 2.0)
	//   CVE-2022-23305 (2026-06-17T04:29:50.293) * [1.2, 1.2.17]
	//   CVE-2021-44228 (2026-06-17T04:12:05)     * [2.0.1, 2.3.1), * [2.4.0, 2.12.2),
	//                                            * [2.13.0, 2.15.0), and 2.0 four times
	//                                            (updates -, beta9, rc1, rc2)
	//   CVE-2022-23302 (2025-07-07)              * [1.0.1, 1.2.17]
	//   CVE-2023-26464 (2025-02-13)              * [1.0.4, 2.0)
	// 23307 and 23305 tie at whole seconds: the higher number first.
	const (
		c23307, c23305, c44228, c23302, c26464 = "CVE-2022-23307", "CVE-2022-23305", "CVE-2021-44228", "CVE-2022-23302", "CVE-2023-26464"
	)
	// cisco/unified_communications_manager, every entry vulnerable, bounds
	// CPE-escaped in the records (11.5\(1\)), list order:
	//   CVE-2021-44228 (2026-06-17)          * < 11.5(1) (twice), 11.5(1) (three times),
	//                                        11.5(1)su3, 11.5(1.17900.52), ...
	//   CVE-2024-20253 (2024-11-21T08:52:06) * < 12.5(1)su8 (twice), * [14.0, 14su3) (twice)
	//   CVE-2023-20266 (2024-11-21T07:41:02) 12.5.1su8 (twice)
	//   CVE-2023-20242 (2024-11-21T07:40:58) 11.5(1), 12.5(1), 14.0 (each twice)
	//   CVE-2022-20800 (2024-11-21T06:43:34) * [11.5(1), 14su2) (twice)
	//   CVE-2022-20791 (2024-11-21T06:43:33) * <= 11.5(1.10000.6), * [12.5, 12.5(1.10000.22)],
	//                                        * [14.0, 14.0(1.10000.20)] (each twice)
	//   CVE-2023-20116 (2023-07-12)          11.5(1.10000.6), 12.0(1.10000.10),
	//                                        12.5(1.10000.22), 14.0(1.10000.20)
	const (
		c20253, c20242, c20800, c20791 = "CVE-2024-20253", "CVE-2023-20242", "CVE-2022-20800", "CVE-2022-20791"
	)
	for _, tc := range []struct {
		vendor, product, version string
		want                     []string
	}{
		// Range edges of log4j.
		{"apache", "log4j", "2.14.1", []string{c44228}},                         // the example: in [2.13.0, 2.15.0)
		{"apache", "log4j", "2.15.0", []string{}},                               // at an end-excluding bound
		{"apache", "log4j", "2.13.0", []string{c44228}},                         // at a start-including bound
		{"apache", "log4j", "2.12.2", []string{}},                               // end-excluding, below 2.13.0
		{"apache", "log4j", "2.12.1", []string{c44228}},                         // just inside [2.4.0, 2.12.2)
		{"apache", "log4j", "2.0", []string{c44228}},                            // exact 2.0; 23307 and 26464 end excluding 2.0
		{"apache", "log4j", "2.0.1", []string{c44228}},                          // start-including
		{"apache", "log4j", "2.0.0", []string{}},                                // not the string 2.0; 2.0.0 > 2.0, so past [.., 2.0)
		{"apache", "log4j", "2.0-beta9", []string{}},                            // the update component (beta9) is not looked at
		{"apache", "log4j", "1.2.17", []string{c23307, c23305, c23302, c26464}}, // at two end-including bounds
		{"apache", "log4j", "1.2", []string{c23307, c23305, c23302, c26464}},    // at two start-including bounds
		{"apache", "log4j", "1.2.18", []string{c23307, c26464}},                 // just past 1.2.17
		{"apache", "log4j", "1.1", []string{c23302, c26464}},                    // below 1.2
		{"apache", "log4j", "1.0.3", []string{c23302}},                          // just below 26464's 1.0.4
		{"apache", "log4j", "1.0.4", []string{c23302, c26464}},                  // at 26464's start

		// Exact versions only: fedoraproject/fedora, every entry
		// vulnerable. 35 is named by CVE-2021-44228 (2026-06-17),
		// CVE-2022-0847 (2025-10-21), CVE-2022-33068 (2024-11-21),
		// CVE-2022-2345 (2023-11-07T03:46:32), CVE-2021-41773
		// (2023-11-07T03:39:00); 38 by CVE-2024-31497 (2025-11-04),
		// CVE-2023-45803 (2025-11-03), CVE-2023-4863 (2023-10-28).
		{"fedoraproject", "fedora", "35", []string{c44228, "CVE-2022-0847", "CVE-2022-33068", "CVE-2022-2345", "CVE-2021-41773"}},
		{"fedoraproject", "fedora", "38", []string{"CVE-2024-31497", "CVE-2023-45803", "CVE-2023-4863"}},
		{"fedoraproject", "fedora", "35.0", []string{}}, // exact means the same string
		{"fedoraproject", "fedora", "3", []string{}},

		// apple/macos: CVE-2023-41992 * [12.0.0, 12.7) and * [13.0, 13.6);
		// seven other CVEs name macos "-", not vulnerable (platforms).
		{"apple", "macos", "12.0.0", []string{"CVE-2023-41992"}},
		{"apple", "macos", "12.0", []string{}}, // 12.0 < 12.0.0 in the version order
		{"apple", "macos", "12.6.9", []string{"CVE-2023-41992"}},
		{"apple", "macos", "12.7", []string{}},
		{"apple", "macos", "13.5.2", []string{"CVE-2023-41992"}},
		{"apple", "macos", "13.6", []string{}},

		// "*" without bounds: siemens/mendix (CVE-2021-44228 only) and
		// cisco/ios_xr (CVE-2013-1234 only) cover every version.
		{"siemens", "mendix", "1", []string{c44228}},
		{"siemens", "mendix", "9.24.0", []string{c44228}},
		{"cisco", "ios_xr", "7.3.2", []string{"CVE-2013-1234"}},

		// CVE-2022-23302 names four products: apache/log4j above, and
		// qos/reload4j * < 1.2.18.1, netapp/snapmanager - (twice) and
		// broadcom/brocade_sannav -, all vulnerable. NA covers no
		// version. reload4j: 23307 * < 1.2.18.1, 23305 * < 1.2.18.2.
		{"qos", "reload4j", "1.2.17", []string{c23307, c23305, c23302}},
		{"qos", "reload4j", "1.2.18.1", []string{c23305}},
		{"qos", "reload4j", "1.2.18.2", []string{}},
		{"netapp", "snapmanager", "1.2.17", []string{}},
		{"broadcom", "brocade_sannav", "1.2.17", []string{}},

		// Escaped bounds and exact versions with parentheses.
		// 11.5(1): 44228 exact (its < 11.5(1) excludes it); 20253 < 12.5(1)su8;
		// 20242 exact; 20800 at its start; 20791 <= 11.5(1.10000.6)
		// (")" < "."); not 20116's exact 11.5(1.10000.6).
		{"cisco", "unified_communications_manager", "11.5(1)", []string{c44228, c20253, c20242, c20800, c20791}},
		{"cisco", "unified_communications_manager", "11.0", []string{c44228, c20253, c20791}},
		// At 20800's end-excluding 14su2, inside 20253's [14.0, 14su3).
		{"cisco", "unified_communications_manager", "14su2", []string{c20253}},
		// At 20253's end-excluding 12.5(1)su8; inside 20800's range and
		// 20791's [12.5, 12.5(1.10000.22)]; not 20266's 12.5.1su8.
		{"cisco", "unified_communications_manager", "12.5(1)su8", []string{c20800, c20791}},

		// linux/linux_kernel 6.8: CVE-2024-53104 (2025-11-03) * [6.7,
		// 6.11.8) (8 < 11); CVE-2024-1086 (2024-06-27) exact 6.8 (update
		// rc1), its [6.7, 6.7.3) does not; CVE-2024-26581 [6.7.0, 6.7.5)
		// does not; CVE-2019-8075's "-" is not vulnerable.
		{"linux", "linux_kernel", "6.8", []string{"CVE-2024-53104", "CVE-2024-1086"}},
	} {
		l, vendorOK, ok := ix.ProductCVEsAt(tc.vendor, tc.product, tc.version)
		if !vendorOK || !ok {
			t.Errorf("%s/%s: vendorOK %v ok %v", tc.vendor, tc.product, vendorOK, ok)
			continue
		}
		var items []struct{ Name string }
		if err := json.Unmarshal(l.AppendAll(nil), &items); err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, it := range items {
			got = append(got, it.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s/%s at %s (-want +got):\n%s", tc.vendor, tc.product, tc.version, diff)
		}
	}
}
