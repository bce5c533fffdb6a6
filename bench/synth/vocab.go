package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// This file builds the vendor/product vocabulary the CVEs draw from and
// the version scheme of each product.
//
// The vocabulary is a pure function of (seed, number of CVEs): a fixed
// head of well-known vendors (microsoft, linux, google, ... ranked first
// so they get the most CVEs) followed by generated names. Vendors are
// drawn Zipf-like (weight 1/(rank+2)), and products within a vendor too
// (weight 1/(rank+1)^1.15, plus for generated vendors an even share,
// productFloor, spread over all their products), so a few vendors and
// products carry a large share of all CVEs and most carry one to three.
//
// Its size grows with the number of CVEs n: vendorsPerCVE*n vendors and
// productsPerCVE*n products, up to maxVendors and maxProducts. Zipf
// draws never reach part of the tail, so the records name fewer: at
// n = 400,000 about 40,500 vendors and 200,000 products, NVD's figures
// (bench/README.md, "Synthetic data", has the measured distributions).

// verStyle is how a product writes its version numbers.
type verStyle uint8

const (
	vsSemver verStyle = iota // 1.2.3, 6.12.1
	vsTwo                    // 1.2
	vsPre                    // 2.0, with pre-releases 2.0-alpha1 ... 2.0-rc2 before it
	vsLetter                 // 4.0, 4.0a ... 4.0e
	vsFour                   // 10.0.19041.1, 111.0.5563.64
	vsParen                  // 12.5(1), 11.5(1.17900.52): CPE-escaped as 12.5\(1\)
	vsPadded                 // 002.009(000.001)
	vsDate                   // 2021.03.1
	vsMajor                  // 38
	numStyles
)

// ver is a position in a product's release history: major, minor and
// patch-level counters. Formatting maps it to the product's style; the
// order of vers is the order of the formatted versions.
type ver struct{ a, b, c int }

func (v ver) less(w ver) bool {
	if v.a != w.a {
		return v.a < w.a
	}
	if v.b != w.b {
		return v.b < w.b
	}
	return v.c < w.c
}

// product is one CPE product of the vocabulary.
type product struct {
	vendor   int32
	name     string // as the vendor calls it, unescaped ("notepad++")
	cpe      string // CPE 2.3 formatted-string form ("notepad\+\+")
	display  string // for descriptions ("Notepad++")
	part     byte   // 'a', 'o' or 'h'
	style    verStyle
	targetSW string // target_sw of its CPEs ("wordpress", "node.js") or ""
	device   string // for firmware ('o' named *_firmware): the hardware product, escaped
	seed     uint64 // shapes its release history
	a0, y0   int    // major version in year y0
	rate     float64
	build0   int // vsFour: build number of minor 0
}

// vendor is one CPE vendor of the vocabulary.
type vendor struct {
	name     string // lowercase letters, digits, '_', '-', '.'
	display  string
	cna      string // its own CNA's sourceIdentifier, or ""
	domain   string // for reference URLs
	products []int32
	cum      []float64 // cumulative product weights
}

// vocab is the whole vocabulary.
type vocab struct {
	vendors  []vendor
	products []product
	vcum     []float64 // cumulative vendor weights
	special  []int32   // products whose CPE names need escaping
	distros  []int32   // distribution products for "also affects" configurations
}

// headProduct describes one product of a head vendor. rate < 0 means
// "draw the release history".
type headProduct struct {
	name     string
	part     byte
	style    verStyle
	a0, y0   int
	rate     float64
	device   string
	targetSW string
}

type headVendor struct {
	name, cna string
	fixedOnly bool // no generated extra products
	// rank, when set, is the rank whose Zipf weight the vendor gets
	// instead of its position's: niche vendors kept in the head only so
	// that their names exist at every size.
	rank     int
	products []headProduct
}

func hp(name string, part byte, style verStyle) headProduct {
	return headProduct{name: name, part: part, style: style, rate: -1}
}

func hpv(name string, part byte, style verStyle, a0, y0 int, rate float64) headProduct {
	return headProduct{name: name, part: part, style: style, a0: a0, y0: y0, rate: rate}
}

// headVendors are the first vendors by rank. Their names are public
// identifiers; nothing else is taken from real data.
var headVendors = []headVendor{
	{name: "microsoft", cna: "secure@microsoft.com", products: []headProduct{
		hpv("windows", 'o', vsFour, 10, 2015, 0), hpv("windows_10", 'o', vsFour, 10, 2015, 0),
		hpv("windows_server_2019", 'o', vsFour, 10, 2018, 0), hpv("windows_11", 'o', vsFour, 10, 2021, 0),
		hp("office", 'a', vsFour), hpv("edge_chromium", 'a', vsFour, 79, 2020, 8), hp("exchange_server", 'a', vsFour),
		hp("sql_server", 'a', vsFour), hp(".net_framework", 'a', vsTwo), hp("sharepoint_server", 'a', vsFour),
		hp("visual_studio_2022", 'a', vsSemver), hp("365_apps", 'a', vsFour),
	}},
	{name: "linux", cna: "", fixedOnly: true, products: []headProduct{
		hpv("linux_kernel", 'o', vsSemver, 2, 1999, 0.17),
	}},
	{name: "google", cna: "chrome-cve-admin@google.com", products: []headProduct{
		hpv("chrome", 'a', vsFour, 1, 2008, 7.5), hpv("android", 'o', vsMajor, 1, 2009, 1), hp("tensorflow", 'a', vsSemver),
	}},
	{name: "apple", cna: "product-security@apple.com", products: []headProduct{
		hpv("macos", 'o', vsSemver, 10, 2001, 0.4), hpv("iphone_os", 'o', vsSemver, 1, 2007, 1), hpv("ipados", 'o', vsSemver, 13, 2019, 1),
		hp("safari", 'a', vsSemver), hp("watchos", 'o', vsSemver),
	}},
	{name: "oracle", cna: "secalert_us@oracle.com", products: []headProduct{
		hp("mysql", 'a', vsSemver), hp("java_se", 'a', vsSemver), hp("database_server", 'a', vsFour),
		hp("weblogic_server", 'a', vsFour), hp("e-business_suite", 'a', vsSemver),
	}},
	{name: "cisco", cna: "psirt@cisco.com", products: []headProduct{
		hp("ios_xe", 'o', vsSemver), hp("ios", 'o', vsParen), hp("unified_communications_manager", 'a', vsParen),
		hp("firepower_extensible_operating_system", 'o', vsParen), hp("adaptive_security_appliance_software", 'a', vsParen),
		hp("identity_services_engine", 'a', vsPadded),
	}},
	{name: "adobe", cna: "psirt@adobe.com", products: []headProduct{
		hp("acrobat_reader_dc", 'a', vsDate), hp("flash_player", 'a', vsFour), hp("experience_manager", 'a', vsSemver),
		hp("photoshop", 'a', vsSemver),
	}},
	{name: "ibm", cna: "psirt@us.ibm.com", products: []headProduct{
		hp("websphere_application_server", 'a', vsFour), hp("db2", 'a', vsFour), hp("qradar_security_information_and_event_manager", 'a', vsSemver),
	}},
	{name: "redhat", cna: "secalert@redhat.com", products: []headProduct{
		hpv("enterprise_linux", 'o', vsTwo, 4, 2005, 0.45), hp("openshift_container_platform", 'a', vsTwo),
		hp("jboss_enterprise_application_platform", 'a', vsSemver),
	}},
	{name: "debian", fixedOnly: true, products: []headProduct{
		hpv("debian_linux", 'o', vsTwo, 3, 2002, 0.45),
	}},
	{name: "fedoraproject", fixedOnly: true, products: []headProduct{
		hpv("fedora", 'o', vsMajor, 1, 2004, 2),
	}},
	{name: "mozilla", cna: "security@mozilla.org", products: []headProduct{
		hpv("firefox", 'a', vsTwo, 1, 2004, 6), hpv("thunderbird", 'a', vsTwo, 1, 2004, 5), hpv("firefox_esr", 'a', vsSemver, 10, 2012, 6),
	}},
	{name: "apache", cna: "security@apache.org", products: []headProduct{
		hpv("http_server", 'a', vsSemver, 2, 2002, 0.02), hp("tomcat", 'a', vsSemver), hp("struts", 'a', vsSemver),
		hp("log4j", 'a', vsPre),
	}},
	{name: "siemens", cna: "productcert@siemens.com", rank: 40, products: []headProduct{
		hp("logo!_soft_comfort", 'a', vsTwo),
		{name: "simatic_s7-1200_firmware", part: 'o', style: vsSemver, rate: -1, device: "simatic_s7-1200"},
		{name: "scalance_x200_firmware", part: 'o', style: vsTwo, rate: -1, device: "scalance_x200"},
	}},
	{name: "netapp", cna: "security-alert@netapp.com", rank: 60, products: []headProduct{
		hp("solidfire_&_hci_storage_node", 'a', vsTwo), hp("ontap", 'a', vsSemver),
	}},
	{name: "notepad-plus-plus", fixedOnly: true, rank: 400, products: []headProduct{
		hpv("notepad++", 'a', vsSemver, 5, 2008, 0.2),
	}},
	{name: "nodejs", fixedOnly: true, rank: 150, products: []headProduct{
		hpv("node.js", 'a', vsSemver, 0, 2010, 1.5),
	}},
	{name: "synthlabs", rank: 300, products: []headProduct{
		hp("a:b", 'a', vsSemver), hp("c&d_suite", 'a', vsLetter),
	}},
}

// cnaPool is the generic CNAs that publish for vendors without their own.
var cnaPool = []struct {
	id     string
	weight float64
}{
	{"security-advisories@github.com", 20},
	{"cna@vuldb.com", 14},
	{"audit@patchstack.com", 9},
	{"security@wordfence.com", 7},
	{"contact@wpscan.com", 4},
	{"security@huntr.dev", 5},
	{"support@hackerone.com", 5},
	{"cret@cert.org", 3},
	{"vultures@jpcert.or.jp", 2},
	{"cve@gitlab.com", 2},
	{"cve-coordination@google.com", 2},
	{"report@snyk.io", 3},
}

var syllables = strings.Fields(`ab ac al an ar as ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo
	ga ge go gu ha he hi ho ja jo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po
	qua ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo xa xe xi ya yo za ze zi zo tra tri pro
	gra bla cle dri flo kra ste vex lum nor syn cor mar tek zen`)

var vendorSuffixes = []string{"", "", "", "", "soft", "tech", "_labs", "_systems", "-project", "_software",
	"_inc", "_networks", "ware", ".io", "_group", "-dev", "hq", "_solutions", "data", "_corp"}

var productSuffixes = []string{"", "", "", "", "_server", "_manager", "-cms", "_studio", "_gateway", "_agent",
	"_api", "_client", "_suite", "_pro", "_enterprise", "_portal", "_viewer", "_sdk", "-core", "_cloud",
	"_desktop", "_mobile", "_connect", "_backup", "_monitor", "_dashboard", "_engine", "_editor"}

var specialWords = []string{"studio", "connector", "edition", "tools", "cloud", "suite"}

// targetSWs are the target_sw values of add-ons and libraries.
var targetSWs = []string{"wordpress", "wordpress", "wordpress", "node.js", "python", "rust", "android",
	"jenkins", "joomla!", "go"}

// escapeCPE writes s in CPE 2.3 formatted-string form: every character
// other than a letter, digit, '_', '-' or '.' is quoted with a backslash.
func escapeCPE(s string) string {
	need := false
	for i := 0; i < len(s); i++ {
		if !plainCPEByte(s[i]) {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		if !plainCPEByte(s[i]) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func plainCPEByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// displayName turns a CPE name into the form a description would use:
// "solidfire_&_hci_storage_node" -> "Solidfire & Hci Storage Node".
func displayName(s string) string {
	words := strings.Split(strings.ReplaceAll(s, "_", " "), " ")
	for i, w := range words {
		if w != "" && w[0] >= 'a' && w[0] <= 'z' {
			words[i] = string(w[0]-'a'+'A') + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// Vocabulary size per CVE, calibrated by measuring 400,000-CVE data sets
// (see the file comment), and its bounds. The caps, reached at 1,000,000
// CVEs, keep the vocabulary (about 80 MB at the cap) from growing with
// larger data sets.
const (
	vendorsPerCVE  = 0.14
	productsPerCVE = 0.88
	maxVendors     = 140_000
	maxProducts    = 880_000
	// productFloor is the share of a generated vendor's draws spread
	// evenly over all its products rather than Zipf-like: without it
	// the Zipf tail of products a vendor lists is never drawn.
	productFloor = 0.35
)

// newVocab builds the vocabulary for n CVEs.
func newVocab(seed uint64, n int) *vocab {
	nv := min(max(int(vendorsPerCVE*float64(n)), 20), maxVendors)
	np := min(max(int(productsPerCVE*float64(n)), 50), maxProducts)
	r := rand.New(rand.NewPCG(seed, 0x766f636162)) // "vocab"
	voc := &vocab{}
	seen := make(map[string]bool, nv) // membership only, never iterated

	// Product budget per vendor rank: heavy-tailed (~1/(rank+1)^0.8),
	// at least one each, at most 3000, scaled so that the total comes
	// close to np despite the head vendors' fixed lists.
	want := make([]int, nv)
	scale := float64(np)
	for range 8 {
		total := 0
		for k := range nv {
			t := min(max(int(math.Round(scale*math.Pow(float64(k+1), -0.8)/10)), 1), 3000)
			if k < len(headVendors) {
				hv := &headVendors[k]
				if hv.fixedOnly {
					t = len(hv.products)
				} else {
					t = max(t, len(hv.products))
				}
			}
			want[k] = t
			total += t
		}
		if math.Abs(float64(total-np)) <= 0.02*float64(np) {
			break
		}
		scale *= float64(np) / float64(total)
	}

	for k := range nv {
		var hv *headVendor
		if k < len(headVendors) {
			hv = &headVendors[k]
		}
		v := vendor{}
		if hv != nil {
			v.name, v.cna = hv.name, hv.cna
		} else {
			v.name = uniqueName(r, seen, func() string { return genVendorName(r) })
			if r.Float64() < 0.04 {
				v.cna = "security@" + strings.NewReplacer("_", "-", ".", "-").Replace(v.name) + ".com"
			}
		}
		seen[v.name] = true
		if v.name == "linux" {
			v.cna = uuidLower(seed, "cna-linux")
		}
		v.display = displayName(v.name)
		v.domain = strings.NewReplacer("_", "-", ".", "").Replace(v.name) + ".example"
		if strings.HasSuffix(v.name, ".io") {
			v.domain = strings.ReplaceAll(v.name, "_", "-")
		}
		vi := int32(len(voc.vendors))
		pseen := map[string]bool{}
		if hv != nil {
			for _, h := range hv.products {
				p := newProduct(r, seed, vi, h.name, h.part, h.style)
				if h.rate >= 0 {
					p.a0, p.y0, p.rate = h.a0, h.y0, h.rate
				}
				if h.device != "" {
					p.device = escapeCPE(h.device)
				}
				p.targetSW = h.targetSW
				pseen[h.name] = true
				v.products = append(v.products, voc.addProduct(p))
			}
		}
		for len(v.products) < want[k] {
			name, part, device, tsw := genProductName(r, pseen)
			pseen[name] = true
			p := newProduct(r, seed, vi, name, part, drawStyle(r))
			p.device, p.targetSW = device, tsw
			v.products = append(v.products, voc.addProduct(p))
		}
		z := 0.0
		for j := range v.products {
			z += math.Pow(float64(j+1), -1.15)
		}
		floor := 0.0
		if hv == nil {
			floor = productFloor / (1 - productFloor) * z / float64(len(v.products))
		}
		c := 0.0
		v.cum = make([]float64, len(v.products))
		for j := range v.products {
			c += math.Pow(float64(j+1), -1.15) + floor
			v.cum[j] = c
		}
		voc.vendors = append(voc.vendors, v)
	}
	c := 0.0
	voc.vcum = make([]float64, nv)
	for k := range nv {
		rank := k
		if k < len(headVendors) && headVendors[k].rank > 0 {
			rank = headVendors[k].rank
		}
		c += 1 / float64(rank+2)
		voc.vcum[k] = c
	}
	for i := range voc.products {
		p := &voc.products[i]
		if p.cpe != p.name {
			voc.special = append(voc.special, int32(i))
		}
		switch voc.vendors[p.vendor].name + ":" + p.name {
		case "debian:debian_linux", "fedoraproject:fedora", "redhat:enterprise_linux":
			voc.distros = append(voc.distros, int32(i))
		}
	}
	return voc
}

func (voc *vocab) addProduct(p product) int32 {
	voc.products = append(voc.products, p)
	return int32(len(voc.products) - 1)
}

// pickVendor draws a vendor index, Zipf-like.
func (voc *vocab) pickVendor(r *rand.Rand) int {
	return pickCum(r, voc.vcum)
}

// pickProduct draws a product of vendor vi, Zipf-like.
func (voc *vocab) pickProduct(r *rand.Rand, vi int) int32 {
	v := &voc.vendors[vi]
	return v.products[pickCum(r, v.cum)]
}

// pickCum draws an index with probability proportional to the steps of
// the cumulative weights cum.
func pickCum(r *rand.Rand, cum []float64) int {
	x := r.Float64() * cum[len(cum)-1]
	i := sort.SearchFloat64s(cum, x)
	if i >= len(cum) {
		i = len(cum) - 1
	}
	return i
}

func uniqueName(r *rand.Rand, seen map[string]bool, gen func() string) string {
	for try := 0; ; try++ {
		s := gen()
		if try > 8 {
			s += strconv.Itoa(r.IntN(1000))
		}
		if !seen[s] {
			return s
		}
	}
}

func word(r *rand.Rand, minSyl, maxSyl int) string {
	n := minSyl + r.IntN(maxSyl-minSyl+1)
	var b strings.Builder
	for range n {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	if r.Float64() < 0.4 {
		b.WriteByte("nrxsktlm"[r.IntN(8)])
	}
	return b.String()
}

func genVendorName(r *rand.Rand) string {
	s := word(r, 2, 3)
	switch u := r.Float64(); {
	case u < 0.05:
		s = "open-" + s
	case u < 0.08:
		s += strconv.Itoa(1 + r.IntN(99))
	}
	return s + vendorSuffixes[r.IntN(len(vendorSuffixes))]
}

// genProductName returns a new product name for a vendor whose names so
// far are in seen, with its part, hardware device (firmware only) and
// target_sw.
func genProductName(r *rand.Rand, seen map[string]bool) (name string, part byte, device, tsw string) {
	part = 'a'
	u := r.Float64()
	name = uniqueName(r, seen, func() string {
		switch {
		case u < 0.003:
			return word(r, 1, 2) + "++"
		case u < 0.006:
			return word(r, 1, 2) + "!_" + specialWords[r.IntN(len(specialWords))]
		case u < 0.009:
			return word(r, 1, 2) + "_&_" + word(r, 1, 2)
		case u < 0.011:
			return word(r, 1, 2) + ":_" + specialWords[r.IntN(len(specialWords))]
		case u < 0.10:
			// firmware with its hardware model
			return word(r, 1, 2) + "_" + string("abcdefghkmnrstwx"[r.IntN(16)]) + strconv.Itoa(10*(1+r.IntN(300))) + "_firmware"
		case u < 0.14:
			return word(r, 1, 2) + "_" + strconv.Itoa(100*(1+r.IntN(90))) + "_router"
		case u < 0.26:
			return strings.ReplaceAll(word(r, 1, 3), "_", "") + []string{"", "_plugin", "_for_wordpress", "-js", "_lib"}[r.IntN(5)]
		}
		return word(r, 1, 3) + productSuffixes[r.IntN(len(productSuffixes))]
	})
	switch {
	case strings.HasSuffix(name, "_firmware"):
		part, device = 'o', strings.TrimSuffix(name, "_firmware")
	case strings.HasSuffix(name, "_router"):
		part = 'h'
	case strings.HasSuffix(name, "_plugin"), strings.HasSuffix(name, "_for_wordpress"):
		tsw = "wordpress"
	case strings.HasSuffix(name, "-js"):
		tsw = "node.js"
	case u >= 0.14 && u < 0.26:
		tsw = targetSWs[r.IntN(len(targetSWs))]
	}
	return name, part, device, tsw
}

func drawStyle(r *rand.Rand) verStyle {
	switch u := r.Float64(); {
	case u < 0.52:
		return vsSemver
	case u < 0.64:
		return vsTwo
	case u < 0.71:
		return vsPre
	case u < 0.75:
		return vsLetter
	case u < 0.81:
		return vsFour
	case u < 0.86:
		return vsParen
	case u < 0.88:
		return vsPadded
	case u < 0.93:
		return vsDate
	case u < 0.96:
		return vsMajor
	}
	return vsSemver
}

func newProduct(r *rand.Rand, seed uint64, vi int32, name string, part byte, style verStyle) product {
	p := product{
		vendor:  vi,
		name:    name,
		cpe:     escapeCPE(name),
		display: displayName(name),
		part:    part,
		style:   style,
		seed:    mix(seed, hashString(name), uint64(vi)),
		a0:      1 + r.IntN(5),
		y0:      1999 + r.IntN(26),
		rate:    0.1 + r.Float64()*r.Float64()*1.6,
		build0:  1000 + r.IntN(20000),
	}
	switch {
	case r.Float64() < 0.2:
		p.a0 = 0
	case part == 'o' && style == vsMajor:
		p.a0 = 1 + r.IntN(10)
	}
	return p
}

// --- versions -------------------------------------------------------

// maxB is the last minor release of major a.
func (p *product) maxB(a int) int {
	switch p.style {
	case vsDate:
		return 11
	case vsMajor:
		return 0
	}
	return int(mix(p.seed, uint64(a), 1) % 10)
}

// maxC is the last patch-level release of a.b.
func (p *product) maxC(a, b int) int {
	switch p.style {
	case vsTwo, vsMajor:
		return 0
	case vsPre:
		return 4 // alpha1, beta1, rc1, rc2, release
	case vsLetter:
		return int(mix(p.seed, uint64(a), uint64(b)) % 7)
	}
	return int(mix(p.seed, uint64(a), uint64(b)) % 16)
}

func (p *product) minA() int {
	if p.style == vsDate {
		return 2000
	}
	return 0
}

// prev is the release before v, false if v is the first one.
func (p *product) prev(v ver) (ver, bool) {
	switch {
	case v.c > 0:
		v.c--
	case v.b > 0:
		v.b--
		v.c = p.maxC(v.a, v.b)
	case v.a > p.minA():
		v.a--
		v.b = p.maxB(v.a)
		v.c = p.maxC(v.a, v.b)
	default:
		return v, false
	}
	return v, true
}

// next is the release after v.
func (p *product) next(v ver) ver {
	switch {
	case v.c < p.maxC(v.a, v.b):
		v.c++
	case v.b < p.maxB(v.a):
		v.b++
		v.c = 0
	default:
		v.a++
		v.b, v.c = 0, 0
	}
	return v
}

// lineStart is the first release of v's minor line (x.y.0, or the first
// pre-release).
func (p *product) lineStart(v ver) ver { v.c = 0; return v }

// current draws the release a CVE of the given year is about.
func (p *product) current(r *rand.Rand, year int) ver {
	y := max(year, p.y0)
	var v ver
	if p.style == vsDate {
		v.a = y - r.IntN(2)
	} else {
		v.a = p.a0 + int(float64(y-p.y0)*p.rate)
	}
	v.b = r.IntN(p.maxB(v.a) + 1)
	v.c = r.IntN(p.maxC(v.a, v.b) + 1)
	if p.style == vsPre && r.Float64() < 0.7 {
		v.c = 4
	}
	return v
}

var preTags = [...]string{"alpha1", "beta1", "rc1", "rc2"}

// format writes v in the product's style, unescaped.
func (p *product) format(v ver) string {
	b := make([]byte, 0, 24)
	itoa := func(i int) { b = strconv.AppendInt(b, int64(i), 10) }
	pad3 := func(i int) {
		if i < 100 {
			b = append(b, '0')
		}
		if i < 10 {
			b = append(b, '0')
		}
		itoa(i)
	}
	switch p.style {
	case vsSemver:
		itoa(v.a)
		b = append(b, '.')
		itoa(v.b)
		b = append(b, '.')
		itoa(v.c)
	case vsTwo:
		itoa(v.a)
		b = append(b, '.')
		itoa(v.b)
	case vsPre:
		itoa(v.a)
		b = append(b, '.')
		itoa(v.b)
		if v.c < 4 {
			b = append(b, '-')
			b = append(b, preTags[v.c]...)
		}
	case vsLetter:
		itoa(v.a)
		b = append(b, '.')
		itoa(v.b)
		if v.c > 0 {
			b = append(b, byte('a'+v.c-1))
		}
	case vsFour:
		itoa(v.a)
		b = append(b, ".0."...)
		itoa(p.build0 + 731*v.b)
		b = append(b, '.')
		itoa(v.c*97 + 1)
	case vsParen:
		itoa(v.a)
		b = append(b, '.')
		itoa(v.b)
		b = append(b, '(')
		itoa(v.c + 1)
		if h := mix(p.seed, uint64(v.a)<<20|uint64(v.b)<<10|uint64(v.c), 7); h%3 == 0 {
			b = append(b, '.')
			itoa(10000 + int(h>>8)%90000)
			b = append(b, '.')
			itoa(1 + int(h>>32)%99)
		}
		b = append(b, ')')
	case vsPadded:
		pad3(v.a)
		b = append(b, '.')
		pad3(v.b)
		b = append(b, '(')
		pad3(v.c / 4)
		b = append(b, '.')
		pad3(v.c % 4)
		b = append(b, ')')
	case vsDate:
		itoa(v.a)
		b = append(b, '.')
		if v.b < 9 {
			b = append(b, '0')
		}
		itoa(v.b + 1)
		b = append(b, '.')
		itoa(v.c)
	case vsMajor:
		itoa(v.a)
	}
	return string(b)
}
