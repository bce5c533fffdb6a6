package loader

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/vulnd/vulnd/index"
)

// ProductKey is a vendor and a product as vulnd lists them: NVD's CPE
// names (vendor "linux", product "linux_kernel").
type ProductKey struct {
	Vendor, Product string
}

func (k ProductKey) String() string { return k.Vendor + "/" + k.Product }

// EntryKeys returns the vendor/product keys of an affected entry of a
// CVE JSON 5 record, each once, in the order found (see the API
// decisions, "CVE records of the CVE Program, JSON 5"):
//
//   - with cpes, each CPE 2.3 formatted string, and each CPE 2.2 URI
//     (cpe:/a:vendor:product:..., percent-decoded, in lower case), gives
//     its vendor and product, CPE escaping removed; a CPE whose vendor or
//     product is ANY ("*"), NA ("-") or empty, or that does not parse,
//     gives none. Aliases never apply to these;
//   - without cpes (or when none of them gives a key), the entry's vendor
//     and product (its packageName when it has no product, or one that
//     gives no key), each normalised (NormalizeName), give a key through
//     aliases when they name it (exactly, else through a "*" vendor);
//     otherwise they give the key of the two normalised names, unless
//     either is empty, "n/a", "unknown", "unspecified" or "-" (trimmed,
//     in any letter case), or either normalises to a name without a
//     letter or digit ("-!" is "-"), which gives no key.
//
// aliases may be nil (no aliases). EntryKeys is safe for concurrent use.
func EntryKeys(e *index.AffectedEntry, aliases *Aliases) []ProductKey {
	var keys []ProductKey
	add := func(k ProductKey) {
		for _, old := range keys {
			if old == k {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, c := range e.CPEs {
		if k, ok := cpeKey(c); ok {
			add(k)
		}
	}
	if len(keys) > 0 {
		return keys
	}
	vendor, product := deref(e.Vendor), deref(e.Product)
	if noKeyName(product) {
		product = deref(e.PackageName)
	}
	nv, np := NormalizeName(vendor), NormalizeName(product)
	if k, ok := aliases.Lookup(nv, np); ok {
		return []ProductKey{k}
	}
	if noKeyName(vendor) || noKeyName(product) || !hasAlnum(nv) || !hasAlnum(np) {
		return nil
	}
	return []ProductKey{{nv, np}}
}

// hasAlnum reports whether a normalised name holds a letter or a digit:
// one that does not ("", "-", "._") names nothing.
func hasAlnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' }) >= 0
}

// noKeyName reports whether a vendor or product name says nothing.
func noKeyName(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "n/a", "unknown", "unspecified", "-":
		return true
	}
	return false
}

// NormalizeName turns a CNA's vendor or product name into the form of a
// CPE name: lower case, each run of characters other than a-z, 0-9, ".",
// "_" and "-" one "_", "_" trimmed at both ends ("Oracle Corporation" ->
// "oracle_corporation", "@babel/traverse" -> "babel_traverse").
func NormalizeName(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteByte(c)
			continue
		}
		gap = true
	}
	return strings.Trim(b.String(), "_")
}

// cpeKey returns the vendor and product of a CPE 2.3 formatted string or
// a CPE 2.2 URI.
func cpeKey(c string) (ProductKey, bool) {
	c = strings.TrimSpace(c)
	var vendor, product string
	if rest, ok := strings.CutPrefix(c, "cpe:/"); ok {
		parts := strings.SplitN(rest, ":", 4)
		if len(parts) < 3 {
			return ProductKey{}, false
		}
		var err1, err2 error
		vendor, err1 = url.PathUnescape(parts[1])
		product, err2 = url.PathUnescape(parts[2])
		if err1 != nil || err2 != nil {
			return ProductKey{}, false
		}
		vendor, product = strings.ToLower(vendor), strings.ToLower(product)
	} else {
		var err error
		if vendor, product, _, err = parseCPE(c); err != nil {
			return ProductKey{}, false
		}
	}
	for _, s := range []string{vendor, product} {
		if s == "" || s == "*" || s == "-" {
			return ProductKey{}, false
		}
	}
	return ProductKey{vendor, product}, true
}

// Aliases maps the names CNAs give products onto NVD's CPE names. Its
// zero value and nil map nothing. An *Aliases is never changed after
// ParseAliases makes it, so it is safe for concurrent use.
type Aliases struct {
	m map[ProductKey]ProductKey // from normalised names; Vendor "*": any vendor
}

// Lookup returns the key the alias file gives a vendor and a product,
// both normalised (NormalizeName): the mapping of that exact pair, else
// that of "*" and the product.
func (a *Aliases) Lookup(vendor, product string) (ProductKey, bool) {
	if a == nil || product == "" {
		return ProductKey{}, false
	}
	if k, ok := a.m[ProductKey{vendor, product}]; ok {
		return k, true
	}
	k, ok := a.m[ProductKey{"*", product}]
	return k, ok
}

// Len returns the number of mappings.
func (a *Aliases) Len() int {
	if a == nil {
		return 0
	}
	return len(a.m)
}

// ParseAliases reads an alias file: one mapping a line,
//
//	cna-vendor/cna-product nvd-vendor/nvd-product # reason
//
// The left side is split at its first "/" and each half normalised
// (NormalizeName), so that names with spaces are written normalised
// ("oracle_corporation/mysql_server"); a vendor "*" matches any vendor
// (for CNAs that write "n/a"). The right side is NVD's vendor and
// product as they are. "#" starts a comment (the reason); blank lines and
// comment lines are skipped. A line that is none of these, or that maps
// a left side a line before it maps, is an error naming the file (name)
// and the line: "loader: aliases NAME:LINE: ...".
func ParseAliases(name string, r io.Reader) (*Aliases, error) {
	a := &Aliases{m: map[ProductKey]ProductKey{}}
	lines := map[ProductKey]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("loader: aliases %s:%d: %s", name, n, fmt.Sprintf(format, args...))
		}
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fail("want cna-vendor/cna-product nvd-vendor/nvd-product, found %d fields", len(fields))
		}
		lv, lp, ok1 := strings.Cut(fields[0], "/")
		rv, rp, ok2 := strings.Cut(fields[1], "/")
		if !ok1 || !ok2 {
			return nil, fail("want cna-vendor/cna-product nvd-vendor/nvd-product, found %q", strings.TrimSpace(line))
		}
		from := ProductKey{"*", NormalizeName(lp)}
		if lv != "*" {
			from.Vendor = NormalizeName(lv)
		}
		if from.Vendor == "" || from.Product == "" {
			return nil, fail("%q names no vendor or no product once normalised", fields[0])
		}
		for _, s := range []string{rv, rp} {
			if s == "" || s == "*" || s == "-" {
				return nil, fail("%q is no NVD vendor and product", fields[1])
			}
		}
		if prev, dup := lines[from]; dup {
			return nil, fail("%s is mapped already on line %d", from, prev)
		}
		lines[from] = n
		a.m[from] = ProductKey{rv, rp}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("loader: aliases %s: %w", name, err)
	}
	return a, nil
}

// defaultAliasesText is the default alias file, aliases.txt.
//
//go:embed aliases.txt
var defaultAliasesText string

var defaultAliases = sync.OnceValues(func() (*Aliases, error) {
	return ParseAliases("aliases.txt", strings.NewReader(defaultAliasesText))
})

// DefaultAliases returns the alias file that ships with vulnd
// (loader/aliases.txt), parsed once. It is safe for concurrent use.
func DefaultAliases() (*Aliases, error) { return defaultAliases() }
