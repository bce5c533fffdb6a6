package main

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// This file holds the CWE ids records cite and writes the small CWE
// catalog, cwec_synth.xml, in the shape of MITRE's catalog (schema
// cwe-7). Ids, abstractions and kinds follow the real catalog; names
// and descriptions are short texts of our own.
//
// Every id a record can cite is in the catalog except MissingCWE, left
// out on purpose so that "a CWE cited but unknown" occurs; records also
// cite NVD-CWE-Other and NVD-CWE-noinfo, which are never in a catalog.

// MissingCWE is the cited CWE id that the catalog leaves out.
const MissingCWE = 1321

// cweEntry is one catalog entry.
type cweEntry struct {
	id     int
	kind   byte   // 'W' weakness, 'C' category, 'V' view
	abs    string // weakness abstraction, or view type
	status string
	name   string
	desc   string
	weight float64 // how often records cite it; 0 = never
	parent int     // weakness: ChildOf target; 0 = none
}

func weak(id int, abs, status string, weight float64, parent int, name, desc string) cweEntry {
	return cweEntry{id: id, kind: 'W', abs: abs, status: status, name: name, desc: desc, weight: weight, parent: parent}
}

// cweEntries is the catalog, weaknesses first, in the order written.
var cweEntries = []cweEntry{
	// Pillars (not cited).
	weak(284, "Pillar", "Incomplete", 1.0, 0, "Access Control Done Wrong", "The product restricts access to a resource incorrectly or not at all."),
	weak(435, "Pillar", "Incomplete", 0, 0, "Unsafe Interplay of Components", "Two or more components behave correctly alone but unsafely together."),
	weak(664, "Pillar", "Draft", 0, 0, "Resource Lifetime Mismanaged", "The product mishandles a resource somewhere between its creation and its release."),
	weak(682, "Pillar", "Draft", 0, 0, "Wrong Arithmetic", "A calculation yields a result that later security decisions rely on but that is wrong."),
	weak(691, "Pillar", "Draft", 0, 0, "Control Flow Mismanaged", "The product does not keep the flow of control where it intends."),
	weak(693, "Pillar", "Draft", 0, 0, "Protection Mechanism Failure", "A defensive mechanism is missing, too weak, or wrongly applied."),
	weak(697, "Pillar", "Incomplete", 0, 0, "Faulty Comparison", "Two values are compared in a way that gives the wrong answer."),
	weak(703, "Pillar", "Incomplete", 0, 0, "Exceptional Conditions Mishandled", "Rare or exceptional conditions are not anticipated or handled."),
	weak(707, "Pillar", "Incomplete", 0, 0, "Neutralization Missing or Wrong", "Structured messages are built or parsed without making their content safe."),
	weak(710, "Pillar", "Incomplete", 0, 0, "Coding Rules Not Followed", "The product ignores established practice for writing code."),
	// Classes.
	weak(20, "Class", "Stable", 5, 707, "Input Validated Badly", "Input is accepted without checking that it has the properties\n            needed to process it safely and correctly."),
	weak(74, "Class", "Incomplete", 0.4, 707, "Downstream Injection", "Externally influenced input reaches a downstream component without its special elements being neutralized."),
	weak(77, "Class", "Draft", 1.2, 74, "Command Built From Input", "A command is assembled from external input without neutralizing elements that change its meaning."),
	weak(116, "Class", "Draft", 0.3, 707, "Output Encoded or Escaped Wrongly", "Data sent to another component is not encoded as that component expects."),
	weak(119, "Class", "Stable", 4, 664, "Memory Buffer Bounds Ignored", "Operations on a memory buffer can read or write outside its intended bounds."),
	weak(200, "Class", "Draft", 3, 668, "Sensitive Data Shown to the Wrong Actor", "Information is exposed to an actor not allowed to see it."),
	weak(269, "Class", "Draft", 1.5, 284, "Privileges Managed Badly", "Privileges are assigned, modified, tracked or checked incorrectly."),
	weak(287, "Class", "Draft", 2, 284, "Identity Proven Badly", "A claimed identity is accepted without sufficient proof."),
	weak(311, "Class", "Draft", 0.3, 693, "Sensitive Data Left Unencrypted", "Sensitive data is stored or sent without encryption."),
	weak(326, "Class", "Draft", 0.2, 693, "Encryption Too Weak", "Data is encrypted with a scheme too weak for the protection required."),
	weak(327, "Class", "Draft", 0.4, 693, "Broken Cryptographic Algorithm", "A cryptographic algorithm known to be broken or risky is used."),
	weak(330, "Class", "Stable", 0.2, 693, "Randomness Too Predictable", "Values needing unpredictability come from an insufficiently random source."),
	weak(345, "Class", "Draft", 0.2, 693, "Data Authenticity Unchecked", "The origin or authenticity of data is not verified well enough."),
	weak(362, "Class", "Draft", 0.8, 691, "Shared Resource Raced", "Concurrent code uses a shared resource without proper synchronization,\n   leaving a window in which it can be changed."),
	weak(400, "Class", "Draft", 2, 664, "Resource Use Unbounded", "Allocation and upkeep of a limited resource is not controlled."),
	weak(522, "Class", "Incomplete", 0.3, 287, "Credentials Protected Poorly", "Credentials are sent or stored in a way open to interception or retrieval."),
	weak(665, "Class", "Draft", 0.2, 664, "Initialization Done Wrong", "A resource is not initialized, or initialized wrongly."),
	weak(668, "Class", "Draft", 0.5, 664, "Resource Exposed to the Wrong Sphere", "A resource becomes reachable by actors who should not reach it."),
	weak(674, "Class", "Draft", 0.3, 691, "Recursion Unbounded", "Recursion depth is not limited, exhausting the stack or other resources."),
	weak(704, "Class", "Incomplete", 0.2, 664, "Type Converted Wrongly", "An object or value is converted to the wrong type."),
	weak(732, "Class", "Draft", 0.7, 284, "Permissions Assigned Wrongly", "A critical resource is given permissions that let unintended actors use it."),
	weak(754, "Class", "Incomplete", 0.3, 703, "Unusual Conditions Unchecked", "Conditions that rarely occur are not checked for."),
	weak(755, "Class", "Incomplete", 0.2, 703, "Exceptions Handled Wrongly", "An exceptional condition is caught but handled incorrectly."),
	weak(862, "Class", "Incomplete", 2.5, 284, "Authorization Check Missing", "An actor's access to a resource or action is never checked."),
	weak(863, "Class", "Incomplete", 1.2, 284, "Authorization Check Wrong", "An access check is made but reaches the wrong decision."),
	// Bases.
	weak(22, "Base", "Stable", 4, 706, "Path Escapes Its Directory", "A pathname built from input can resolve outside the directory it is meant to stay in."),
	weak(59, "Base", "Draft", 0.8, 706, "Link Followed Before File Access", "A file is opened by name without checking whether the name is a link to another file."),
	weak(78, "Base", "Stable", 4, 77, "OS Command Built From Input", "An operating system command is built from input without neutralizing\n\n            elements that change the command."),
	weak(79, "Base", "Stable", 10, 74, "Script Injected Into Generated Pages", "Input is placed in a web page served to other users without being neutralized, so it can run as script in their browsers."),
	weak(89, "Base", "Stable", 6, 74, "SQL Built From Input", "An SQL statement is built from input without neutralizing elements that change the statement."),
	weak(94, "Base", "Draft", 2, 74, "Code Generated From Input", "Code is generated from input without neutralizing elements that change its syntax or behaviour."),
	weak(120, "Base", "Incomplete", 1.5, 119, "Copy Without Size Check", "A buffer is copied into another without checking that it fits."),
	weak(125, "Base", "Draft", 4.5, 119, "Read Past Buffer Bounds", "Data is read from before the start or past the end of a buffer."),
	weak(190, "Base", "Stable", 2, 682, "Integer Wraparound", "A calculation overflows or wraps around where the logic assumes it cannot."),
	weak(203, "Base", "Incomplete", 0.2, 200, "Observable Discrepancy", "Responses differ observably in ways that reveal internal state."),
	weak(276, "Base", "Draft", 0.8, 732, "Default Permissions Too Open", "Files are installed with permissions that let anyone modify them."),
	weak(290, "Base", "Incomplete", 0.4, 287, "Authentication Bypassed by Spoofing", "An authentication scheme can be bypassed by spoofing what it checks."),
	weak(295, "Base", "Draft", 0.6, 287, "Certificate Validated Wrongly", "A certificate is not validated, or validated incorrectly."),
	weak(306, "Base", "Draft", 1, 287, "Critical Function Without Authentication", "A function that needs a proven identity can be used without one."),
	weak(307, "Base", "Draft", 0.3, 287, "Authentication Attempts Unlimited", "Repeated failed authentication attempts are not limited."),
	weak(312, "Base", "Draft", 0.3, 311, "Cleartext Storage of Secrets", "Sensitive information is stored in cleartext."),
	weak(319, "Base", "Draft", 0.4, 311, "Cleartext Transmission of Secrets", "Sensitive information is sent in cleartext over a channel others can sniff."),
	weak(347, "Base", "Draft", 0.3, 345, "Signature Verified Wrongly", "A cryptographic signature is not verified, or verified incorrectly."),
	weak(369, "Base", "Draft", 0.3, 682, "Division by Zero", "A value is divided by zero."),
	weak(427, "Base", "Draft", 0.5, 668, "Search Path Under Attacker Control", "A fixed search path is used that can contain elements outside the product's control."),
	weak(434, "Base", "Draft", 2.5, 669, "Dangerous File Type Uploaded", "Files of dangerous types can be uploaded and then processed automatically."),
	weak(459, "Base", "Draft", 0.2, 404, "Cleanup Incomplete", "Temporary or supporting resources are not cleaned up after use."),
	weak(476, "Base", "Stable", 2.5, 754, "NULL Pointer Dereferenced", "A pointer expected to be valid is NULL when it is dereferenced."),
	weak(502, "Base", "Draft", 1.2, 913, "Untrusted Data Deserialized", "Untrusted data is deserialized without sufficiently checking that the result is valid."),
	weak(532, "Base", "Incomplete", 0.6, 200, "Secrets Written to Logs", "Sensitive information is written to a log file."),
	weak(552, "Base", "Draft", 0.2, 668, "Files Reachable by Outsiders", "Files or directories are reachable by unauthorized actors."),
	weak(601, "Base", "Draft", 0.8, 610, "Redirect to Untrusted Site", "A redirect target taken from input can point to an untrusted site."),
	weak(611, "Base", "Draft", 0.8, 610, "XML External Entity Resolved", "An XML document may define external entities that resolve outside the intended sphere."),
	weak(613, "Base", "Incomplete", 0.2, 672, "Session Expiry Too Lax", "Old session identifiers or credentials remain usable for authorization."),
	weak(617, "Base", "Draft", 0.5, 670, "Reachable Assertion", "An assertion can be triggered by an attacker, stopping the product."),
	weak(639, "Base", "Incomplete", 0.4, 863, "Key Controlled by the User", "A record is selected by a key the user controls, bypassing authorization."),
	weak(640, "Base", "Incomplete", 0.3, 287, "Weak Password Recovery", "The password recovery mechanism is weak."),
	weak(681, "Base", "Draft", 0.2, 704, "Numeric Conversion Wrong", "A value converted between numeric types changes unexpectedly."),
	weak(770, "Base", "Incomplete", 0.5, 400, "Allocation Without Limits", "Resources are allocated for an actor without any limit or throttling."),
	weak(772, "Base", "Draft", 0.4, 404, "Resource Never Released", "A resource is not released after its effective lifetime ends."),
	weak(787, "Base", "Draft", 6, 119, "Write Past Buffer Bounds", "Data is written before the start or past the end of a buffer."),
	weak(798, "Base", "Draft", 0.8, 344, "Credentials Built Into the Code", "Passwords or keys are hard-coded into the product."),
	weak(835, "Base", "Incomplete", 0.5, 834, "Loop That Never Ends", "A loop's exit condition can never be met."),
	weak(843, "Base", "Incomplete", 0.4, 704, "Type Confusion", "A resource is accessed as a type incompatible with the one it was created with."),
	weak(908, "Base", "Incomplete", 0.3, 665, "Uninitialized Resource Used", "A resource is used before it has been initialized."),
	weak(918, "Base", "Incomplete", 1, 441, "Server-Side Request Forgery", "A URL from input is fetched by the server without checking where it leads."),
	weak(1021, "Base", "Incomplete", 0.4, 441, "UI Layers Not Restricted", "Rendered UI layers or frames from another origin are not restricted."),
	weak(1236, "Base", "Incomplete", 0.3, 74, "Formula Injected Into CSV", "Spreadsheet formulas in input are written to CSV files unneutralized."),
	weak(1333, "Base", "Incomplete", 0.3, 407, "Regular Expression Too Costly", "A regular expression can take exponential time on crafted input."),
	// Variants and compounds.
	weak(121, "Variant", "Draft", 0.4, 787, "Stack Buffer Overflow", "A buffer on the stack is overwritten past its end."),
	weak(122, "Variant", "Draft", 0.6, 787, "Heap Buffer Overflow", "A buffer on the heap is overwritten past its end."),
	weak(401, "Variant", "Draft", 0.5, 772, "Memory Never Freed", "Allocated memory is not released once no longer needed."),
	weak(415, "Variant", "Draft", 0.3, 825, "Memory Freed Twice", "The same memory is freed twice."),
	weak(416, "Variant", "Stable", 4, 825, "Memory Used After Free", "Memory is referenced after it has been freed."),
	weak(1321, "Variant", "Incomplete", 0.6, 915, "Prototype Attributes Modified", "Input can add or modify attributes of an object prototype."),
	weak(352, "Compound", "Stable", 3.5, 345, "Forged Cross-Site Request", "The application cannot tell whether a request was intentionally made by the user who sent it."),
	weak(384, "Compound", "Incomplete", 0.3, 610, "Session Fixation", "An existing session identifier is kept when authenticating a user."),
	// Deprecated and obsolete entries, never cited.
	weak(71, "Variant", "Deprecated", 0, 0, "DEPRECATED: Apple Resource Fork Issue", "This entry was merged into another and must not be used."),
	weak(1187, "Base", "Deprecated", 0, 0, "DEPRECATED: Uninitialized Value Use", "This entry duplicated another and must not be used."),
	weak(188, "Base", "Obsolete", 0, 0, "Memory Layout Relied Upon", "Data is accessed by assuming a memory layout the language does not promise."),

	// Categories: old records cite some of them.
	{id: 16, kind: 'C', status: "Obsolete", name: "Configuration", desc: "Weaknesses introduced while configuring the software.", weight: 0.5},
	{id: 17, kind: 'C', status: "Obsolete", name: "DEPRECATED: Code", desc: "A grouping of weaknesses introduced while writing code.", weight: 0.3},
	{id: 19, kind: 'C', status: "Draft", name: "Data Processing Errors", desc: "Weaknesses in how the product processes data.", weight: 0.5},
	{id: 189, kind: 'C', status: "Draft", name: "Numeric Errors", desc: "Weaknesses in handling numbers.", weight: 1},
	{id: 254, kind: 'C', status: "Obsolete", name: "7PK - Security Features", desc: "Weaknesses in authentication, access control, confidentiality, cryptography and privilege management.", weight: 0.6},
	{id: 264, kind: 'C', status: "Obsolete", name: "Permissions, Privileges, and Access Controls", desc: "Weaknesses in managing permissions, privileges and other access controls.", weight: 2.5},
	{id: 310, kind: 'C', status: "Obsolete", name: "Cryptographic Issues", desc: "Weaknesses in the use of cryptography.", weight: 1},
	{id: 399, kind: 'C', status: "Obsolete", name: "Resource Management Errors", desc: "Weaknesses in managing system resources.", weight: 2},
	{id: 1345, kind: 'C', status: "Incomplete", name: "Top Ten 2021 A01: Broken Access Control", desc: "Weaknesses mapped to the first entry of a well-known top-ten list."},
	{id: 1, kind: 'C', status: "Deprecated", name: "DEPRECATED: Location", desc: "A deprecated grouping that must not be used for mapping."},

	// Views.
	{id: 1000, kind: 'V', abs: "Graph", status: "Draft", name: "Research Hierarchy", desc: "A hierarchy of every weakness by abstraction, meant for research into weaknesses and their relationships."},
	{id: 699, kind: 'V', abs: "Graph", status: "Draft", name: "Software Development Groups", desc: "Weaknesses grouped by concepts that come up in software development."},
	{id: 1003, kind: 'V', abs: "Graph", status: "Incomplete", name: "Simplified Mapping for Vulnerability Data", desc: "A small set of weaknesses suited to labelling published vulnerabilities."},
	{id: 1387, kind: 'V', abs: "Explicit", status: "Incomplete", name: "Most Dangerous Weaknesses (synthetic list)", desc: "A fixed list of weaknesses considered most dangerous."},
	{id: 1400, kind: 'V', abs: "Implicit", status: "Draft", name: "Comprehensive Categorization", desc: "Every weakness assigned to exactly one category."},
}

// cweTable is the citing side of the catalog.
type cweTable struct {
	ids, catIDs []string
	cum, catCum []float64
}

func newCWETable() cweTable {
	var t cweTable
	c, cc := 0.0, 0.0
	for _, e := range cweEntries {
		if e.weight == 0 {
			continue
		}
		id := "CWE-" + strconv.Itoa(e.id)
		if e.kind == 'C' {
			cc += e.weight
			t.catIDs, t.catCum = append(t.catIDs, id), append(t.catCum, cc)
		} else {
			c += e.weight
			t.ids, t.cum = append(t.ids, id), append(t.cum, c)
		}
	}
	return t
}

// pick draws a cited CWE id; category draws one of the categories that
// old records cite.
func (t *cweTable) pick(r *rand.Rand, category bool) string {
	if category {
		return t.catIDs[pickCum(r, t.catCum)]
	}
	return t.ids[pickCum(r, t.cum)]
}

// CitedCWEs returns every CWE id ("CWE-n") records may cite, sorted.
func CitedCWEs() []string {
	t := newCWETable()
	out := append(append([]string{}, t.ids...), t.catIDs...)
	sort.Strings(out)
	return out
}

// catalogXML renders the catalog.
func (t *cweTable) catalogXML() []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<Weakness_Catalog Name="CWE" Version="synth" Date="2026-10-30" xmlns="http://cwe.mitre.org/cwe-7" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://cwe.mitre.org/cwe-7 http://cwe.mitre.org/data/xsd/cwe_schema_v7.2.xsd" xmlns:xhtml="http://www.w3.org/1999/xhtml">` + "\n")
	section := func(tag string, kind byte, write func(e cweEntry)) {
		b.WriteString("   <" + tag + ">\n")
		for _, e := range cweEntries {
			if e.kind == kind && e.id != MissingCWE {
				write(e)
			}
		}
		b.WriteString("   </" + tag + ">\n")
	}
	section("Weaknesses", 'W', func(e cweEntry) {
		b.WriteString(`      <Weakness ID="` + strconv.Itoa(e.id) + `" Name="` + xmlAttr(e.name) + `" Abstraction="` + e.abs +
			`" Structure="` + structure(e) + `" Status="` + e.status + "\">\n")
		b.WriteString("         <Description>" + xmlText(e.desc) + "</Description>\n")
		if e.id%3 == 0 {
			b.WriteString("         <Extended_Description>\n            <xhtml:p>In practice this shows up in " + xmlText(strings.ToLower(e.name)) +
				" cases that <xhtml:b>reach</xhtml:b> security decisions.</xhtml:p>\n         </Extended_Description>\n")
		}
		if e.parent != 0 {
			b.WriteString("         <Related_Weaknesses>\n            <Related_Weakness Nature=\"ChildOf\" CWE_ID=\"" +
				strconv.Itoa(e.parent) + "\" View_ID=\"1000\" Ordinal=\"Primary\"/>\n         </Related_Weaknesses>\n")
		}
		if e.abs != "Pillar" {
			b.WriteString("         <Applicable_Platforms>\n            <Language Class=\"Not Language-Specific\" Prevalence=\"Undetermined\"/>\n         </Applicable_Platforms>\n")
		}
		history(&b, e)
		b.WriteString("      </Weakness>\n")
	})
	section("Categories", 'C', func(e cweEntry) {
		b.WriteString(`      <Category ID="` + strconv.Itoa(e.id) + `" Name="` + xmlAttr(e.name) + `" Status="` + e.status + "\">\n")
		b.WriteString("         <Summary>" + xmlText(e.desc) + "</Summary>\n")
		b.WriteString("         <Relationships>\n            <Has_Member CWE_ID=\"20\" View_ID=\"699\"/>\n         </Relationships>\n")
		history(&b, e)
		b.WriteString("      </Category>\n")
	})
	section("Views", 'V', func(e cweEntry) {
		b.WriteString(`      <View ID="` + strconv.Itoa(e.id) + `" Name="` + xmlAttr(e.name) + `" Type="` + e.abs + `" Status="` + e.status + "\">\n")
		b.WriteString("         <Objective>" + xmlText(e.desc) + "</Objective>\n")
		if e.abs != "Implicit" {
			b.WriteString("         <Members>\n            <Has_Member CWE_ID=\"284\" View_ID=\"" + strconv.Itoa(e.id) + "\"/>\n" +
				"            <Has_Member CWE_ID=\"664\" View_ID=\"" + strconv.Itoa(e.id) + "\"/>\n         </Members>\n")
		}
		history(&b, e)
		b.WriteString("      </View>\n")
	})
	b.WriteString("   <External_References>\n      <External_Reference Reference_ID=\"REF-1\">\n         <Author>Synthetic Author</Author>\n" +
		"         <Title>Notes on Weakness Taxonomies</Title>\n         <Publication_Year>2020</Publication_Year>\n      </External_Reference>\n   </External_References>\n")
	b.WriteString("</Weakness_Catalog>\n")
	return b.Bytes()
}

func structure(e cweEntry) string {
	if e.abs == "Compound" {
		return "Composite"
	}
	return "Simple"
}

// history writes a Content_History: a submission dated by the id's era
// and one to three modifications, the last one the entry's update time.
func history(b *bytes.Buffer, e cweEntry) {
	h := mix(uint64(e.id), 0x637765)
	subYear := 2006
	sub := "2006-07-19"
	switch {
	case e.id >= 1300:
		subYear = 2020
		sub = "2020-0" + strconv.Itoa(1+int(h%9)) + "-1" + strconv.Itoa(int(h>>8)%9)
	case e.id >= 1000:
		subYear = 2017
		sub = "2017-0" + strconv.Itoa(1+int(h%9)) + "-2" + strconv.Itoa(int(h>>8)%8)
	case e.id >= 700:
		subYear = 2008
		sub = "2008-09-08"
	}
	b.WriteString("         <Content_History>\n            <Submission>\n")
	b.WriteString("               <Submission_Name>" + []string{"Synthetic Taxonomy Import", "CWE Content Team", "External Contributor"}[h%3] + "</Submission_Name>\n")
	b.WriteString("               <Submission_Date>" + sub + "</Submission_Date>\n            </Submission>\n")
	// One to three modifications in later years, the last in 2022-2024.
	mods := 1 + int(h>>16)%3
	year := max(subYear+1, 2018+int(h>>24)%3)
	for k := range mods {
		if k == mods-1 {
			year = max(year, 2022+int(h>>40)%3)
		}
		date := strconv.Itoa(year) + "-0" + strconv.Itoa(1+(k*3+int(h>>32))%9) + "-2" + strconv.Itoa(k)
		b.WriteString("            <Modification>\n               <Modification_Name>CWE Content Team</Modification_Name>\n")
		b.WriteString("               <Modification_Date>" + date + "</Modification_Date>\n")
		b.WriteString("               <Modification_Comment>updated Relationships</Modification_Comment>\n            </Modification>\n")
		year++
	}
	b.WriteString("         </Content_History>\n")
}

// xmlText escapes s as XML character data, keeping whitespace (newlines
// and indentation inside descriptions are part of the test data).
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// xmlAttr escapes s as a double-quoted XML attribute value.
func xmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
