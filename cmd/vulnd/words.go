package main

import (
	"fmt"
	"strconv"

	"github.com/vulnd/vulnd/index"
)

// plural is n followed by one or many, as n asks: "1 report",
// "2 reports", "0 reports".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// byteSize is n bytes as a person reads it, in the unit that keeps it
// between 1 and 1000 (decimal, as MB everywhere here): "512 bytes",
// "41.0 kB", "12.3 MB", "4.5 GB".
func byteSize(n int64) string {
	if n < 1000 {
		return plural(int(n), "byte", "bytes")
	}
	v, unit := float64(n)/1000, "kB"
	for _, bigger := range []string{"MB", "GB"} {
		if v < 999.95 { // prints below 1000.0
			break
		}
		v, unit = v/1000, bigger
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// countsLine is a snapshot's counts as build and validate print them:
// "186 CVEs, 1427 CWEs, 92 vendors, 395 products, 1 report".
func countsLine(c index.Counts) string {
	return plural(c.CVEs, "CVE", "CVEs") + ", " + plural(c.CWEs, "CWE", "CWEs") + ", " +
		plural(c.Vendors, "vendor", "vendors") + ", " + plural(c.Products, "product", "products") + ", " +
		plural(c.Reports, "report", "reports")
}
