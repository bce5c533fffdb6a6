package main

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// This file writes descriptions, cveTags and references. All text is
// generated from small templates of our own; none is taken from NVD.

// flaw is how descriptions speak of a weakness.
type flaw struct {
	en, impact, es string
}

var flaws = map[string]flaw{
	"CWE-79":   {"cross-site scripting (XSS)", "inject arbitrary web script or HTML", "secuencias de comandos en sitios cruzados (XSS)"},
	"CWE-89":   {"SQL injection", "execute arbitrary SQL commands", "inyección SQL"},
	"CWE-787":  {"an out-of-bounds write", "execute arbitrary code or cause a denial of service (memory corruption)", "una escritura fuera de límites"},
	"CWE-20":   {"improper input validation", "cause a denial of service or possibly have unspecified other impact", "una validación de entrada incorrecta"},
	"CWE-125":  {"an out-of-bounds read", "obtain sensitive information from process memory", "una lectura fuera de límites"},
	"CWE-78":   {"OS command injection", "execute arbitrary operating system commands", "inyección de comandos del sistema operativo"},
	"CWE-416":  {"a use-after-free", "execute arbitrary code", "un uso después de liberación"},
	"CWE-22":   {"path traversal", "read arbitrary files", "un salto de directorio"},
	"CWE-352":  {"cross-site request forgery (CSRF)", "hijack the authentication of administrators", "falsificación de petición en sitios cruzados (CSRF)"},
	"CWE-434":  {"unrestricted file upload", "upload and execute arbitrary files", "una subida de archivos sin restricciones"},
	"CWE-476":  {"a NULL pointer dereference", "cause a denial of service (crash)", "una desreferencia de puntero NULL"},
	"CWE-190":  {"an integer overflow", "cause a denial of service or execute arbitrary code", "un desbordamiento de enteros"},
	"CWE-287":  {"improper authentication", "bypass authentication", "una autenticación incorrecta"},
	"CWE-400":  {"uncontrolled resource consumption", "cause a denial of service (resource exhaustion)", "un consumo de recursos no controlado"},
	"CWE-119":  {"a buffer overflow", "execute arbitrary code or cause a denial of service", "un desbordamiento de búfer"},
	"CWE-120":  {"a classic buffer overflow", "execute arbitrary code", "un desbordamiento de búfer clásico"},
	"CWE-200":  {"an information disclosure", "obtain sensitive information", "una divulgación de información"},
	"CWE-269":  {"improper privilege management", "gain elevated privileges", "una gestión de privilegios incorrecta"},
	"CWE-94":   {"code injection", "execute arbitrary code", "inyección de código"},
	"CWE-862":  {"a missing authorization check", "perform unauthorized actions", "una falta de autorización"},
	"CWE-863":  {"incorrect authorization", "access resources of other users", "una autorización incorrecta"},
	"CWE-918":  {"server-side request forgery (SSRF)", "make the server send requests to internal hosts", "falsificación de peticiones del lado del servidor (SSRF)"},
	"CWE-77":   {"command injection", "execute arbitrary commands", "inyección de comandos"},
	"CWE-306":  {"missing authentication for a critical function", "reconfigure the device", "una falta de autenticación"},
	"CWE-502":  {"deserialization of untrusted data", "execute arbitrary code", "una deserialización de datos no confiables"},
	"CWE-798":  {"hard-coded credentials", "log in with administrative rights", "credenciales codificadas"},
	"CWE-276":  {"incorrect default permissions", "modify installed files", "permisos predeterminados incorrectos"},
	"CWE-732":  {"incorrect permission assignment", "read or modify configuration files", "una asignación de permisos incorrecta"},
	"CWE-611":  {"an XML external entity (XXE) issue", "read arbitrary files via a crafted XML document", "una entidad externa XML (XXE)"},
	"CWE-59":   {"a link following issue", "overwrite arbitrary files via a symlink attack", "un seguimiento de enlaces"},
	"CWE-1321": {"prototype pollution", "add or modify properties of Object.prototype", "una contaminación de prototipos"},
	"CWE-601":  {"an open redirect", "redirect users to arbitrary web sites", "una redirección abierta"},
	"CWE-362":  {"a race condition", "gain privileges or cause a denial of service", "una condición de carrera"},
	"CWE-401":  {"a memory leak", "cause a denial of service (memory consumption)", "una pérdida de memoria"},
	"CWE-770":  {"allocation of resources without limits", "cause a denial of service", "una asignación de recursos sin límites"},
	"CWE-835":  {"an infinite loop", "cause a denial of service (CPU consumption)", "un bucle infinito"},
	"CWE-295":  {"improper certificate validation", "spoof servers via a crafted certificate", "una validación de certificados incorrecta"},
	"CWE-532":  {"sensitive information in log files", "obtain credentials from log files", "información confidencial en archivos de registro"},
}

var genericFlaw = flaw{"a security vulnerability", "compromise the affected system", "una vulnerabilidad de seguridad"}

var (
	actors    = []string{"remote attackers", "remote authenticated users", "local users", "an unauthenticated attacker", "a low-privileged user", "attackers with physical access", "an authenticated administrator"}
	actorsES  = []string{"atacantes remotos", "usuarios autenticados remotos", "usuarios locales", "un atacante no autenticado"}
	vectors   = []string{"a crafted request", "the %s parameter", "a crafted file", "a malicious web page", "crafted packets", "a long string", "a specially crafted URL", "the %s header"}
	funcParts = []string{"parse", "handle", "read", "load", "get", "set", "process", "update", "render", "decode", "check", "init"}
	objParts  = []string{"header", "config", "user", "session", "image", "packet", "request", "token", "record", "buffer", "path", "attr", "entry", "page"}
	files     = []string{"index.php", "admin/settings.php", "api.js", "main.c", "server.go", "upload.aspx", "views.py", "handler.cc", "util.rs", "login.jsp"}
	subsys    = []string{"net", "fs", "mm", "drm/amd", "usb", "bpf", "netfilter", "ext4", "sched", "wifi", "bluetooth", "scsi", "tty", "io_uring"}
	severityW = []string{"critical", "problematic", "serious"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func identifier(r *rand.Rand) string {
	return pick(r, funcParts) + "_" + pick(r, objParts)
}

func (g *Generator) text(s *subject) (*[]CVETag, []LangString) {
	r := g.stream(s.i, secText)
	if s.rejected {
		var t string
		switch r.IntN(3) {
		case 0:
			t = "** REJECT ** This candidate number is not in use. It was reserved but never associated with a vulnerability."
		case 1:
			t = "** REJECT ** This candidate duplicates CVE-" + strconv.Itoa(s.year) + "-" + pad4(1+r.IntN(9000)) + ". All references and descriptions in this candidate have been removed."
		default:
			t = "** REJECT ** Withdrawn by its numbering authority: the reported behaviour is not a security issue."
		}
		tags := &[]CVETag{}
		if r.Float64() < 0.3 {
			tags = nil
		}
		return tags, []LangString{{Lang: "en", Value: t}}
	}
	voc := g.plan.voc
	p := &voc.products[s.prods[0]]
	v := &voc.vendors[p.vendor]
	f, ok := flaws[s.mainCWE()]
	if !ok {
		f = genericFlaw
	}
	fixed := p.format(p.next(s.cur))
	last := p.format(s.cur)
	prod := p.display
	full := v.display + " " + prod // "Linux Kernel", not "Linux Linux Kernel"
	if strings.HasPrefix(strings.ToLower(prod), strings.ToLower(v.display)) {
		full = prod
	}
	var b strings.Builder
	b.Grow(400)
	w := b.WriteString
	vec := pick(r, vectors)
	if strings.Contains(vec, "%s") {
		vec = strings.Replace(vec, "%s", identifier(r), 1)
	}
	actor := pick(r, actors)
	switch t := r.IntN(8); {
	case v.name == "linux" && s.pubYear >= 2024:
		w("In the Linux kernel, the following vulnerability has been resolved:\n\n")
		w(pick(r, subsys) + ": fix " + strings.TrimPrefix(strings.TrimPrefix(f.en, "an "), "a ") + " in " + identifier(r) + "()\n\n")
		w("The " + identifier(r) + " path can be reached with a stale pointer when the device is removed\nwhile a request is in flight. Take the lock before walking the list.")
	case t == 0 && strings.HasPrefix(v.cna, "secure@"):
		w(prod + " " + titleImpact(f) + " Vulnerability")
	case t <= 2:
		w(capitalize(f.en) + " in " + identifier(r) + " in " + full + " before " + fixed +
			" allows " + actor + " to " + f.impact + " via " + vec + ".")
	case t == 3:
		w(full + " " + last + " and earlier is vulnerable to " + f.en + ". " + capitalize(actor) +
			" could exploit this to " + f.impact + ".")
	case t == 4:
		w("In " + identifier(r) + " of " + pick(r, files) + ", there is a possible " + strings.TrimPrefix(strings.TrimPrefix(f.en, "an "), "a ") +
			" due to a missing bounds check. This could lead to " + pick(r, []string{"local escalation of privilege", "remote information disclosure", "remote denial of service"}) +
			" with no additional execution privileges needed. User interaction is " + pick(r, []string{"not needed", "needed"}) + " for exploitation.")
	case t == 5:
		w("A flaw rated " + pick(r, severityW) + " was found in " + full + " up to " + last + ". It affects the function " +
			identifier(r) + " of the file " + pick(r, files) + ". Manipulating the argument " + identifier(r) + " leads to " + f.en +
			". The attack can be launched remotely.")
	case t == 6:
		w(capitalize(f.en) + " in " + full + " allows " + actor + " to " + f.impact +
			". This issue affects " + prod + ": from n/a through " + last + ".")
	default:
		w("An issue was discovered in " + full + " " + last + ". " + capitalize(actor) + " can " + f.impact +
			" because of " + f.en + " in the " + identifier(r) + " component.")
	}
	// Occasional characters that need care when encoding or displaying.
	switch u := r.Float64(); {
	case u < 0.02:
		w(` For example, the payload "<script>alert(document.domain)</script>" is echoed back unescaped.`)
	case u < 0.03:
		w(` The installer writes to C:\ProgramData\` + p.name + `\ with weak permissions.`)
	case u < 0.04:
		w(" NOTE: the vendor’s position is that this is intended behaviour…")
	case u < 0.07:
		w("\n\nThis issue was fixed in version " + fixed + ".  ")
	}
	en := b.String()

	var tags *[]CVETag
	switch u := r.Float64(); {
	case u < 0.015:
		en = "** DISPUTED ** " + en
		tags = &[]CVETag{{SourceIdentifier: s.source, Tags: []string{"disputed"}}}
	case u < 0.02:
		en = "** UNSUPPORTED WHEN ASSIGNED ** " + en
		tags = &[]CVETag{{SourceIdentifier: s.source, Tags: []string{"unsupported-when-assigned"}}}
	case u < 0.79:
		tags = &[]CVETag{}
	}
	descs := []LangString{{Lang: "en", Value: en}}
	if s.pubYear >= 2010 && r.Float64() < 0.35 {
		es := capitalize(f.es) + " en " + full + " anterior a " + fixed + " permite a " + pick(r, actorsES) +
			" comprometer el sistema afectado mediante una petición manipulada."
		descs = append(descs, LangString{Lang: "es", Value: es})
	}
	return tags, descs
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func titleImpact(f flaw) string {
	switch {
	case strings.Contains(f.impact, "code"):
		return "Remote Code Execution"
	case strings.Contains(f.impact, "denial"):
		return "Denial of Service"
	case strings.Contains(f.impact, "privilege"):
		return "Elevation of Privilege"
	case strings.Contains(f.impact, "information"):
		return "Information Disclosure"
	}
	return "Security Feature Bypass"
}

// --- references ------------------------------------------------------

// refKind builds one reference URL and its tags.
type refKind struct {
	weightOld, weightNew float64
	build                func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string)
}

func num(r *rand.Rand, lo, hi int) string { return strconv.Itoa(lo + r.IntN(hi-lo)) }

func hexString(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = hexLower[r.IntN(16)]
	}
	return string(b)
}

func slug(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			return c
		case c >= 'A' && c <= 'Z':
			return c - 'A' + 'a'
		}
		return '-'
	}, s)
}

func ym(s *subject) (string, string) {
	y := strconv.Itoa(s.pubYear)
	m := formatMS(s.pub)[5:7]
	return y, m
}

var refKinds = []refKind{
	{6, 8, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		t := []string{"Vendor Advisory"}
		if r.Float64() < 0.3 {
			t = append(t, "Patch")
		}
		return "https://www." + v.domain + "/security/advisories/" + strings.ToUpper(slug(v.name)[:min(3, len(v.name))]) + "-" + strconv.Itoa(s.pubYear) + "-" + pad4(r.IntN(900)), t
	}},
	{1, 7, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://github.com/" + slug(v.name) + "/" + slug(p.name) + "/commit/" + hexString(r, 40), []string{"Patch"}
	}},
	{0.5, 5, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		t := []string{"Issue Tracking"}
		if r.Float64() < 0.3 {
			t = append(t, "Exploit", "Third Party Advisory")
		}
		return "https://github.com/" + slug(v.name) + "/" + slug(p.name) + "/issues/" + num(r, 1, 9000), t
	}},
	{0, 3, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://github.com/" + slug(v.name) + "/" + slug(p.name) + "/security/advisories/GHSA-" + hexString(r, 4) + "-" + hexString(r, 4) + "-" + hexString(r, 4), []string{"Vendor Advisory"}
	}},
	{3, 3, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		y, m := ym(s)
		return "https://lists.debian.org/debian-lts-announce/" + y + "/" + m + "/msg000" + num(r, 10, 99) + ".html", []string{"Mailing List", "Third Party Advisory"}
	}},
	{4, 2, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		y, m := ym(s)
		return "http://www.openwall.com/lists/oss-security/" + y + "/" + m + "/" + pad2(1+r.IntN(28)) + "/" + num(r, 1, 12), []string{"Mailing List"}
	}},
	{8, 0.3, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		t := []string{"Third Party Advisory", "VDB Entry"}
		if r.Float64() < 0.15 {
			t = []string{"Broken Link"}
		}
		return "http://www.securityfocus.com/bid/" + num(r, 1, 110000), t
	}},
	{2, 1, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://www.exploit-db.com/exploits/" + num(r, 1000, 52000), []string{"Exploit", "Third Party Advisory", "VDB Entry"}
	}},
	{1.5, 1, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "http://packetstormsecurity.com/files/" + num(r, 10000, 180000) + "/" + displaySlug(p) + "-" + strings.ToUpper(hexString(r, 2)) + ".html", []string{"Exploit", "Third Party Advisory", "VDB Entry"}
	}},
	{0, 2, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		if r.Float64() < 0.3 {
			return "https://vuldb.com/?ctiid." + num(r, 200000, 300000), []string{"Permissions Required"}
		}
		return "https://vuldb.com/?id." + num(r, 200000, 300000), []string{"Third Party Advisory"}
	}},
	{0.3, 1, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://news.example.com/security/" + displaySlug(p) + "-flaw-" + num(r, 1, 999) + "/", []string{"Press/Media Coverage"}
	}},
	{1, 2, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://www." + v.domain + "/releases/" + slug(p.name) + "-" + p.format(p.next(s.cur)), []string{"Release Notes"}
	}},
	{2, 1.5, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		if r.Float64() < 0.5 {
			y, m := ym(s)
			return "https://security.gentoo.org/glsa/" + y + m + "-" + pad2(1+r.IntN(40)), []string{"Third Party Advisory"}
		}
		return "https://ubuntu.com/security/notices/USN-" + num(r, 1000, 7000) + "-1", []string{"Third Party Advisory"}
	}},
	{0.1, 0.4, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://www.cisa.gov/known-exploited-vulnerabilities-catalog?search=" + s.id + "&field_date_added_wrapper=all", []string{"US Government Resource"}
	}},
	{2, 1, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://bugzilla.redhat.com/show_bug.cgi?id=" + num(r, 100000, 2300000), []string{"Issue Tracking", "Third Party Advisory"}
	}},
	{0.5, 1, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://blog." + v.domain + "/" + displaySlug(p) + "-" + slug(s.id), []string{pick(r, []string{"Technical Description", "Mitigation", "Exploit"})}
	}},
	{0.3, 0.5, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://www." + v.domain + "/products/" + slug(p.name), []string{"Product"}
	}},
	{2, 0.3, func(r *rand.Rand, s *subject, v *vendor, p *product) (string, []string) {
		return "https://exchange.xforce.ibmcloud.com/vulnerabilities/" + num(r, 1000, 290000), []string{"VDB Entry"}
	}},
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func displaySlug(p *product) string { return slug(strings.ReplaceAll(p.display, " ", "-")) }

func (g *Generator) references(s *subject) []Reference {
	r := g.stream(s.i, secRefs)
	if s.rejected {
		return []Reference{}
	}
	voc := g.plan.voc
	old := s.pubYear <= 2016
	mean := 2.5
	if old {
		mean = 4.5
	}
	n := 1 + int(r.ExpFloat64()*mean)
	if r.Float64() < 0.03 {
		n = 10 + r.IntN(21)
	}
	n = min(n, 30)
	tagged := 0.0
	switch s.status {
	case "Analyzed":
		tagged = 0.92
	case "Modified":
		tagged = 0.8
	case "Deferred":
		if s.hasNVD {
			tagged = 0.7
		}
	}
	tot := 0.0
	for _, k := range refKinds {
		tot += k.weight(old)
	}
	refs := make([]Reference, 0, n)
	for tries := 0; len(refs) < n && tries < 3*n; tries++ {
		pi := s.prods[r.IntN(len(s.prods))]
		if r.Float64() < 0.7 {
			pi = s.prods[0]
		}
		p := &voc.products[pi]
		x := r.Float64() * tot
		kind := refKinds[len(refKinds)-1]
		for _, k := range refKinds {
			if x < k.weight(old) {
				kind = k
				break
			}
			x -= k.weight(old)
		}
		url, tags := kind.build(r, s, &voc.vendors[p.vendor], p)
		if r.Float64() >= tagged {
			tags = nil
		}
		dup := false
		for _, e := range refs {
			if e.URL == url {
				dup = true
				break
			}
		}
		if !dup {
			refs = append(refs, Reference{URL: url, Source: s.source, Tags: tags})
		}
	}
	// The CISA ADP republishes some references under its own source.
	if s.pubYear >= 2019 && r.Float64() < 0.12 {
		adp := uuidLower(g.plan.cfg.Seed, "adp")
		for k := range min(len(refs), 30-len(refs)) {
			e := refs[k]
			e.Source = adp
			refs = append(refs, e)
		}
	}
	return refs
}

func (k refKind) weight(old bool) float64 {
	if old {
		return k.weightOld
	}
	return k.weightNew
}
