package main

import (
	"strconv"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/fetch"
)

// plural is n followed by one or many, as n asks: "1 report",
// "2 reports", "0 reports".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// byteSize is n bytes as a person reads it: fetch.ByteSize.
func byteSize(n int64) string { return fetch.ByteSize(n) }

// countsLine is a snapshot's counts as build and validate print them:
// "186 CVEs, 1427 CWEs, 92 vendors, 395 products, 1 report".
func countsLine(c index.Counts) string {
	return plural(c.CVEs, "CVE", "CVEs") + ", " + plural(c.CWEs, "CWE", "CWEs") + ", " +
		plural(c.Vendors, "vendor", "vendors") + ", " + plural(c.Products, "product", "products") + ", " +
		plural(c.Reports, "report", "reports")
}
