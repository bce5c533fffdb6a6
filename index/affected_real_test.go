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
	//                                            * [2.13.0, 2.15.0), and 2.0 four times,
	//                                            with updates -, beta9, rc1 and rc2 (so
	//                                            2.0, 2.0-beta9, 2.0-rc1, 2.0-rc2; none "*")
	//   CVE-2022-23302 (2025-07-07)              * [1.0.1, 1.2.17]
	//   CVE-2023-26464 (2025-02-13)              * [1.0.4, 2.0)
	// 23307 and 23305 tie at whole seconds: the higher number first.
	const (
		c23307, c23305, c44228, c23302, c26464 = "CVE-2022-23307", "CVE-2022-23305", "CVE-2021-44228", "CVE-2022-23302", "CVE-2023-26464"
	)
	// cisco/unified_communications_manager, every entry vulnerable, every
	// update "*", bounds CPE-escaped in the records (11.5\(1\)), list
	// order:
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
	// In the version order 11.5(1) is 11.5.1 and su a word, above every
	// number: 11.5(1) < 11.5(1.10000.6) < 11.5(1)su3 < 12.5(1.10000.22) <
	// 12.5(1)su8 = 12.5.1su8 < 14 = 14.0 < 14.0(1.10000.20) < 14su2 < 14su3.
	const (
		c20253, c20266, c20242, c20800, c20791 = "CVE-2024-20253", "CVE-2023-20266", "CVE-2023-20242", "CVE-2022-20800", "CVE-2022-20791"
	)
	// linux/linux_kernel, every entry vulnerable; list order:
	//   CVE-2024-53104 (2025-11-03) * [2.6.26, 4.19.324), [4.20, 5.4.286), [5.5, 5.10.230),
	//                               [5.11, 5.15.172), [5.16, 6.1.117), [6.2, 6.6.61),
	//                               [6.7, 6.11.8), [6.12, 6.12.1)
	//   CVE-2022-0847 (2025-10-21)  * [5.8, 5.10.102), [5.15, 5.15.25), [5.16, 5.16.11)
	//   CVE-2024-1086 (2024-06-27)  * [3.15, 5.15.149), [6.1, 6.1.76), [6.2, 6.6.15),
	//                               [6.7, 6.7.3), and 6.8 with update rc1: 6.8-rc1
	//   CVE-2024-26581 (2024-06-25) * < 5.4.269, [5.5.0, 5.10.210), [5.11.0, 5.15.149),
	//                               [5.16.0, 6.1.78), [6.2.0, 6.6.17), [6.7.0, 6.7.5)
	//   CVE-2019-8075's "-" is not vulnerable.
	const c53104, c1086, c26581 = "CVE-2024-53104", "CVE-2024-1086", "CVE-2024-26581"
	for _, tc := range []struct {
		vendor, product, version string
		want                     []string
	}{
		// Range edges of log4j.
		{"apache", "log4j", "2.14.1", []string{c44228}}, // the example: in [2.13.0, 2.15.0), no 1.x CVE
		{"apache", "log4j", "2.15.0", []string{}},       // at an end-excluding bound
		{"apache", "log4j", "2.13.0", []string{c44228}}, // at a start-including bound
		{"apache", "log4j", "2.12.2", []string{}},       // end-excluding, below 2.13.0
		{"apache", "log4j", "2.12.1", []string{c44228}}, // just inside [2.4.0, 2.12.2)
		{"apache", "log4j", "2.0", []string{c44228}},    // exact 2.0 (update -); 23307 and 26464 end excluding 2.0
		{"apache", "log4j", "2.0.0", []string{c44228}},  // 2.0.0 is 2.0
		{"apache", "log4j", "2.0.1", []string{c44228}},  // start-including
		// The pre-releases: 44228 by its 2.0:beta9 and 2.0:rc1
		// entries; against 23307's and 26464's < 2.0 they count as 2.0,
		// so no log4j 1.x CVE.
		{"apache", "log4j", "2.0-beta9", []string{c44228}},
		{"apache", "log4j", "2.0-rc1", []string{c44228}},
		{"apache", "log4j", "2.0.RC2", []string{c44228}},
		// No entry names 2.0-beta1 (44228's 2.0 entries have concrete
		// updates, none "*"), and as 2.0 it is past < 2.0.
		{"apache", "log4j", "2.0-beta1", []string{}},
		{"apache", "log4j", "1.2.17", []string{c23307, c23305, c23302, c26464}}, // at two end-including bounds
		{"apache", "log4j", "1.2", []string{c23307, c23305, c23302, c26464}},    // at two start-including bounds
		{"apache", "log4j", "1.2.18", []string{c23307, c26464}},                 // just past 1.2.17
		{"apache", "log4j", "1.1", []string{c23302, c26464}},                    // below 1.2
		{"apache", "log4j", "1.0.3", []string{c23302}},                          // just below 26464's 1.0.4
		{"apache", "log4j", "1.0.4", []string{c23302, c26464}},                  // at 26464's start

		// Exact versions only: fedoraproject/fedora, every entry
		// vulnerable, update "*". 35 is named by CVE-2021-44228
		// (2026-06-17), CVE-2022-0847 (2025-10-21), CVE-2022-33068
		// (2024-11-21), CVE-2022-2345 (2023-11-07T03:46:32),
		// CVE-2021-41773 (2023-11-07T03:39:00); 38 by CVE-2024-31497
		// (2025-11-04), CVE-2023-45803 (2025-11-03), CVE-2023-4863
		// (2023-10-28).
		{"fedoraproject", "fedora", "35", []string{c44228, "CVE-2022-0847", "CVE-2022-33068", "CVE-2022-2345", "CVE-2021-41773"}},
		{"fedoraproject", "fedora", "38", []string{"CVE-2024-31497", "CVE-2023-45803", "CVE-2023-4863"}},
		{"fedoraproject", "fedora", "35.0", []string{c44228, "CVE-2022-0847", "CVE-2022-33068", "CVE-2022-2345", "CVE-2021-41773"}},    // 35.0 is 35
		{"fedoraproject", "fedora", "35-beta", []string{c44228, "CVE-2022-0847", "CVE-2022-33068", "CVE-2022-2345", "CVE-2021-41773"}}, // 35 (update *) and a word
		{"fedoraproject", "fedora", "35.1", []string{}},
		{"fedoraproject", "fedora", "3", []string{}},

		// apple/macos: CVE-2023-41992 * [12.0.0, 12.7) and * [13.0, 13.6);
		// eight other CVEs name macos "-", not vulnerable (platforms).
		{"apple", "macos", "12.0.0", []string{"CVE-2023-41992"}},
		{"apple", "macos", "12.0", []string{"CVE-2023-41992"}},      // 12.0 is 12.0.0
		{"apple", "macos", "12", []string{"CVE-2023-41992"}},        // and so is 12
		{"apple", "macos", "12.0-beta", []string{"CVE-2023-41992"}}, // as 12.0 against the bound 12.0.0
		{"apple", "macos", "12.6.9", []string{"CVE-2023-41992"}},
		{"apple", "macos", "12.7", []string{}},
		{"apple", "macos", "12.7-beta", []string{}}, // as 12.7 against < 12.7
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
		{"qos", "reload4j", "1.2.18.1-rc1", []string{c23305}}, // as 1.2.18.1 against < 1.2.18.1, as itself against < 1.2.18.2
		{"qos", "reload4j", "1.2.18.2", []string{}},
		{"netapp", "snapmanager", "1.2.17", []string{}},
		{"broadcom", "brocade_sannav", "1.2.17", []string{}},

		// Escaped bounds and exact versions with parentheses.
		// 11.5(1): 44228 exact (its < 11.5(1) excludes it); 20253 < 12.5(1)su8;
		// 20242 exact; 20800 at its start; 20791 <= 11.5(1.10000.6);
		// not 20116's exact 11.5(1.10000.6).
		{"cisco", "unified_communications_manager", "11.5(1)", []string{c44228, c20253, c20242, c20800, c20791}},
		{"cisco", "unified_communications_manager", "11.0", []string{c44228, c20253, c20791}},
		// 11.5(1)su3: 44228 exact; 20242 by 11.5(1) (update *) and the
		// word su; 20253 and 20800 by range; past 20791's 11.5(1.10000.6).
		{"cisco", "unified_communications_manager", "11.5(1)su3", []string{c44228, c20253, c20242, c20800}},
		// 11.5(1)SU4: named by no entry; 44228 and 20242 by 11.5(1) and a word.
		{"cisco", "unified_communications_manager", "11.5(1)SU4", []string{c44228, c20253, c20242, c20800}},
		// At 20800's end-excluding 14su2, inside 20253's [14.0, 14su3);
		// 20242 by 14.0 and the word su; past 20791's 14.0(1.10000.20).
		{"cisco", "unified_communications_manager", "14su2", []string{c20253, c20242}},
		// At 20253's end-excluding 12.5(1)su8; 20266's 12.5.1su8 is the
		// same version; 20242 by 12.5(1) and a word; inside 20800's
		// range; past 20791's 12.5(1.10000.22).
		{"cisco", "unified_communications_manager", "12.5(1)su8", []string{c20266, c20242, c20800}},

		// linux/linux_kernel, the cases. 6.8: only 53104's
		// [6.7, 6.11.8) (8 < 11); 1086's entry is 6.8-rc1, its [6.7,
		// 6.7.3) ends before; 26581's [6.7.0, 6.7.5) too.
		{"linux", "linux_kernel", "6.8", []string{c53104}},
		// 6.8-rc1: 1086 exact; 53104 as itself (its release 6.8 is no
		// bound) in [6.7, 6.11.8).
		{"linux", "linux_kernel", "6.8-rc1", []string{c53104, c1086}},
		// 5.5, 6.2, 6.7: 26581's ranges start at 5.5.0, 6.2.0, 6.7.0
		// (the same versions); 53104 starts at 5.5, 6.2, 6.7; 1086 by
		// [3.15, 5.15.149), [6.2, 6.6.15), [6.7, 6.7.3); 0847 starts at 5.8.
		{"linux", "linux_kernel", "5.5", []string{c53104, c1086, c26581}},
		{"linux", "linux_kernel", "6.2", []string{c53104, c1086, c26581}},
		{"linux", "linux_kernel", "6.7", []string{c53104, c1086, c26581}},

		// vitejs/vite: CVE-2025-30208 * < 4.5.10, [5.0.0, 5.4.15), [6.0.0,
		// 6.0.12), [6.1.0, 6.1.2), [6.2.0, 6.2.3). vercel/next.js:
		// CVE-2025-29927 * [11.1.4, 12.3.5), [13.0.0, 13.5.9), [14.0.0,
		// 14.2.25), [15.0.0, 15.2.3).
		{"vitejs", "vite", "6.2", []string{"CVE-2025-30208"}},
		{"vitejs", "vite", "6.2.0", []string{"CVE-2025-30208"}},
		{"vitejs", "vite", "6.2.3", []string{}},
		{"vercel", "next.js", "13.0", []string{"CVE-2025-29927"}},
		{"vercel", "next.js", "13.0.0", []string{"CVE-2025-29927"}},
		{"vercel", "next.js", "13.5.9", []string{}},
	} {
		l, err := ix.ProductCVEsAt(tc.vendor, tc.product, tc.version)
		if err != nil {
			t.Errorf("%s/%s: %v", tc.vendor, tc.product, err)
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
