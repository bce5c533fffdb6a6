package index

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-json"
)

// Band is a CVSS severity band of GET /cve?cvss=.
type Band int

// The bands on cvss.score: low 0.1–3.9, medium 4.0–6.9, high 7.0–10.0,
// critical 9.0–10.0. Critical is inside high: a CVE in BandCritical is in
// BandHigh's list too. A score of 0 (none known) is in no band.
const (
	BandNone Band = iota // no filter: every CVE
	BandLow
	BandMedium
	BandHigh
	BandCritical
)

// Meta describes the snapshot an Index was built from.
type Meta struct {
	// ID identifies the snapshot's content; it changes whenever the
	// snapshot does and becomes the ETag.
	ID string
	// BuiltAt is the snapshot's build time, "YYYY-MM-DD HH:MM:SSZ".
	BuiltAt string
	// Format is the snapshot format version; Inputs the upstream files
	// it was built from; LoadStarted when loading it began (zero when
	// not loaded from disk). GET /status shows them.
	Format      int
	Inputs      []Input
	LoadStarted time.Time
	// Artifact is the OCI artifact the snapshot was pulled as (vulnd
	// serve -pull); zero when it was built or copied onto the disk.
	Artifact Artifact
	// InputDates are how current each input source is (see InputDates).
	InputDates InputDates
	// EPSS, when set, are the snapshot's EPSS scores; the index copies
	// them into its own table and does not keep EPSS.
	EPSS *EPSSSource
}

// Index is one snapshot, ready to answer queries. It is immutable and safe
// for concurrent use.
type Index struct {
	meta Meta
	etag string

	cwes      [][]byte         // CWE bodies by number ascending; also the list items
	cweByName map[string]int32 // canonical name -> position in cwes
	cweCVEs   [][]int32        // per position in cwes: CVE positions in list order

	cveBodies [][]byte         // full CVE bodies in list order
	cveSumEnd []uint32         // per position: cveBodies[p][:cveSumEnd[p]] and "}" is the CVE summary
	cveByName map[uint64]int32 // cveKey of the name -> position
	bands     [5][]int32       // BandNone is nil: the identity list
	bandAt    []Band           // per position: the CVE's narrowest band (BandCritical, not BandHigh)
	// cweAt[cweOff[p]:cweOff[p+1]] are the catalog positions of the
	// CWEs the CVE at position p cites, for /cve?cwe= on a short list.
	cweOff    []int32
	cweAt     []int32
	updated   []uint64 // per position: updated_at as digits, descending
	published []uint64 // per position: created_at as digits
	// createdNotAfterUpdated: no CVE's created_at is after its
	// updated_at, so published_since can start from updated_since's cut.
	createdNotAfterUpdated bool
	minPublished           uint64 // the earliest created_at; 0 when there are no CVEs
	noCPE, noCVSS          int    // CVEs without any CPE, without any CVSS score
	// entryKeyed counts the CVEs without any CPE that have a vendor and
	// product from their affected entries.
	entryKeyed int
	details    *Details // in list order
	kevs       []int32  // positions of the CVEs with a KEV entry
	cvssAt     []uint8  // per position: cvss.score in tenths, 0 to 100

	// EPSS (see epss.go): per position, score and percentile in
	// millionths, epssNone without a row; nil when the snapshot has no
	// EPSS (hasEPSS false).
	epssScore, epssPct  []uint32
	epssModel, epssDate string
	epssRows            int
	hasEPSS             bool
	// orders are the whole list in each CVESort but SortUsual, made on
	// first use (a pointer: WithArtifact's copy shares them).
	orders *[SortRisk + 1]sortedOrder

	// The vendor and product tables, made on first use (see
	// vendorTables): a pointer, so that WithArtifact's copy shares them.
	*vendorTables

	reports    [][]byte // report summaries, newest first
	reportByID map[string]*report
	history    []histRec // NVD's change history of the reports (nvdhistory.go)

	counts  Counts    // Vendors and Products are vendorTables'
	readyAt time.Time // when BuildEntries finished

	explain ExplainSources // see explain.go
	nvd     *NVD           // NVD's records for its CVE API (nvdapi.go); nil: none
}

// vendorTables are an index's vendors and products. A load leaves them
// to be made on their first use, or by serve's warm-up right after it
// (see BuildEntriesDeferVendors): gathering the vendors and products of
// every CPE and writing their lists was a fifth of a load on one core.
// Every method that reads them calls vendorsReady first; the fields are
// promoted into Index for the code that runs after it.
type vendorTables struct {
	once  sync.Once
	build func() error // what makes them; nil once made
	err   error        // build's error, or the counts not the expected ones
	// want are the counts the snapshot's manifest gives, checked once
	// the tables are made; zero: none given.
	wantVendors, wantProducts int
	nVendors, nProducts       int

	// Vendors and products, packed (see packed.go). A vendor's products
	// are consecutive in products, in name order.
	vendors       packed            // vendor summaries, name ascending
	vendorRecs    []vendorRec       // same positions
	vendorByName  map[string]uint32 // name -> position; keys are views into keys
	vendorSearch  *lazySearch       // made on the first search (see search.go)
	products      packed            // product summaries
	productRecs   []productRec      // same positions
	productByName map[string]uint32 // productKey -> position; keys are views into keys
	productSearch *lazySearch       // over every product, same positions
	affs          []productAff      // same positions
	// vendorBodies and productBodies are the bodies, made on first
	// request (see Vendor and Product), same positions as the records.
	vendorBodies  []lazyBody
	productBodies []lazyBody
	vpCVEs        []int32 // vendor and product CVE lists
	keys          []byte  // the maps' keys, back to back
}

// vendorsReady makes the vendor and product tables if they are not made
// yet, once; every reader of them calls it first.
func (ix *Index) vendorsReady() {
	t := ix.vendorTables
	t.once.Do(func() {
		if t.build == nil {
			return
		}
		t.err = t.build()
		t.build = nil
		if t.err == nil && t.wantVendors+t.wantProducts > 0 && (t.nVendors != t.wantVendors || t.nProducts != t.wantProducts) {
			t.err = fmt.Errorf("%w: %d vendors and %d products, the snapshot says %d and %d", ErrInvalid,
				t.nVendors, t.nProducts, t.wantVendors, t.wantProducts)
		}
	})
}

// WarmVendors makes the vendor and product tables of an index loaded by
// BuildEntriesDeferVendors now, if no request has yet, and returns what
// went wrong making them: a build error, or counts that are not those
// ExpectVendors gave. It is safe to call while the index serves.
func (ix *Index) WarmVendors() error {
	ix.vendorsReady()
	return ix.vendorTables.err
}

// ExpectVendors gives the counts of vendors and products the tables of
// an index built by BuildEntriesDeferVendors must have once made (see
// WarmVendors). Call it before the index serves.
func (ix *Index) ExpectVendors(vendors, products int) {
	ix.vendorTables.wantVendors, ix.vendorTables.wantProducts = vendors, products
}

// Counts are the sizes of an Index, for logs and manifests.
type Counts struct {
	CVEs     int `json:"cves"`
	CWEs     int `json:"cwes"`
	Vendors  int `json:"vendors"`
	Products int `json:"products"`
	Reports  int `json:"reports"`
	Alerts   int `json:"alerts"`
}

type vendorRec struct {
	cves           run // in vpCVEs
	key            run // in keys: its name, its key in vendorByName
	prodLo, prodHi uint32
}

type productRec struct {
	cves       run  // in vpCVEs
	key        run  // in keys: its key in productByName
	vulnerable bool // some CPE of the product is: its affected may match
	entries    bool // some CVE is listed through affected entries
}

// productAff is what ProductCVEsAt reads of a product: aff nil when no
// CPE of the product is vulnerable, cna nil when no CVE is listed under
// it through its JSON 5 entries. The product's first ProductCVEsAt builds it,
// not the load: few products are ever asked by version, and building every
// product's would add about a tenth to every load. It reads the CPEs again
// from the bodies of the product's CVEs rather than keep them from the
// load, which would hold some 90 MB at 400k CVEs for the few products
// asked.
type productAff struct {
	once sync.Once
	aff  *affected
	// cna is, likewise, the table of the product's affected entries of
	// the CVEs listed through them (see entryTable); nil when none is.
	cna *entryTable
}

type report struct {
	body   []byte           // {"id","created_at","handlers","alerts"}
	alerts []byte           // [alert summary...]
	events map[int64][]byte // alert id -> [event...]
}

// ErrInvalid is wrapped by Build's errors: the data breaks an invariant the
// index relies on.
var ErrInvalid = errors.New("index: invalid data")

var encodeOptions = []json.EncodeOptionFunc{json.DisableHTMLEscape()}

func encode(v any) []byte {
	b, err := json.MarshalWithOption(v, encodeOptions...)
	if err != nil {
		// Only plain structs, strings, numbers and RawMessage validated
		// below are encoded; a failure is a programming error.
		panic(fmt.Sprintf("index: encode %T: %v", v, err))
	}
	return b
}

// Build computes an Index from d. It does not keep d or anything reachable
// from it but strings. It fails if names are missing or duplicated, or if
// an event's details are not a JSON object.
func Build(d *Data, meta Meta) (*Index, error) {
	entries := make([]CVEEntry, len(d.CVEs))
	for i := range d.CVEs {
		e, err := ScanCVE(EncodeCVE(&d.CVEs[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		entries[i] = e
	}
	b := NewDetailsBuilder()
	for i := range d.CVEs {
		if err := b.Add(&d.CVEs[i]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	ix, err := BuildEntries(d.CWEs, entries, b.Details(), d.Reports, meta)
	if err != nil || d.NVD == nil {
		return ix, err
	}
	if ix.nvd, err = BuildNVD(d.NVD); err != nil {
		return nil, err
	}
	return ix, nil
}

// BuildEntries computes an Index from CVEs already encoded (see ScanCVE),
// the CWE catalog and the reports. The Index keeps the entries' bodies and
// nothing else of them; it may reorder cves. It fails as Build does.
func BuildEntries(cwes []CWE, cves []CVEEntry, details *Details, reports []Report, meta Meta) (*Index, error) {
	ix, err := BuildEntriesDeferVendors(cwes, cves, details, reports, meta)
	if err != nil {
		return nil, err
	}
	if err := ix.WarmVendors(); err != nil {
		return nil, err
	}
	return ix, nil
}

// BuildEntriesDeferVendors is BuildEntries leaving the vendor and product
// tables to be made on their first use (or by WarmVendors), which keeps
// the entries' CPEs until then: what a load for serving does. Their
// errors are WarmVendors'.
func BuildEntriesDeferVendors(cwes []CWE, cves []CVEEntry, details *Details, reports []Report, meta Meta) (*Index, error) {
	ix := &Index{meta: meta, etag: `"` + meta.ID + `"`, orders: new([SortRisk + 1]sortedOrder), vendorTables: &vendorTables{}}
	if err := ix.buildCWEs(cwes); err != nil {
		return nil, err
	}
	if details == nil {
		details = emptyDetails(len(cves))
	}
	if details.Len() != len(cves) {
		return nil, fmt.Errorf("%w: details of %d CVEs for %d CVEs", ErrInvalid, details.Len(), len(cves))
	}
	if err := ix.buildCVEs(cves, details); err != nil {
		return nil, err
	}
	if err := ix.buildEPSS(meta.EPSS); err != nil {
		return nil, err
	}
	ix.meta.EPSS = nil // its rows are copied: let the source go
	if err := ix.buildReports(reports); err != nil {
		return nil, err
	}
	ix.readyAt = time.Now()
	return ix, nil
}

func (ix *Index) buildCWEs(in []CWE) error {
	type numbered struct {
		n int
		c *CWE
	}
	list := make([]numbered, 0, len(in))
	for i := range in {
		n, ok := CWENumber(in[i].Name)
		if !ok || in[i].Name != "CWE-"+strconv.Itoa(n) {
			return fmt.Errorf("%w: CWE name %q", ErrInvalid, in[i].Name)
		}
		list = append(list, numbered{n, &in[i]})
	}
	sort.Slice(list, func(a, b int) bool { return list[a].n < list[b].n })
	ix.cwes = make([][]byte, len(list))
	ix.cweByName = make(map[string]int32, len(list))
	for i, e := range list {
		if _, dup := ix.cweByName[e.c.Name]; dup {
			return fmt.Errorf("%w: duplicate %s", ErrInvalid, e.c.Name)
		}
		ix.cweByName[e.c.Name] = int32(i)
		ix.cwes[i] = encode(e.c)
	}
	ix.cweCVEs = make([][]int32, len(list))
	ix.counts.CWEs = len(list)
	return nil
}

// cveBody is the API's CVE object: CVE without the change-tracking fields.
// Its first four members are those of the CVE summary, in the same order,
// so a summary is a prefix of the body and a closing brace.
type cveBody struct {
	Name       string      `json:"name"`
	Summary    string      `json:"summary"`
	CreatedAt  string      `json:"created_at"`
	UpdatedAt  string      `json:"updated_at"`
	CPEs       []CPE       `json:"cpes"`
	CWEs       []string    `json:"cwes"`
	CVSS       CVSS        `json:"cvss"`
	References []Reference `json:"references"`
}

// The vendor and product summaries and bodies are written by hand rather
// than by encode: {"name","human_name"} and {"name","human_name",
// "products"} or {..., "versions"}, byte for byte what encode makes of
// them (see TestVendorBodiesAsEncoded). At 400k CVEs that is 38k vendors
// and 179k products, and encode's way took a fifth of the vendors' part
// of a load.

// plainJSON reports whether s is printable ASCII without a quote or a
// backslash: what encode writes between quotes as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendJSONName appends s as encode writes the string.
func appendJSONName(dst []byte, s string) []byte {
	if !plainJSON(s) {
		return append(dst, encode(s)...)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendHumanName appends HumanName(name) as encode writes the string,
// without making it when name is plain (see plainJSON).
func appendHumanName(dst []byte, name string) []byte {
	if !plainJSON(name) {
		return append(dst, encode(HumanName(name))...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			c = ' '
		case i == 0 || name[i-1] == '_':
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

// appendNameSummary appends {"name","human_name"}, then, if list is
// not "", the member list with the names of items (its products or its
// versions), and the closing brace.
func appendNameSummary(dst []byte, name, list string, items []string) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendJSONName(dst, name)
	dst = append(dst, `,"human_name":`...)
	dst = appendHumanName(dst, name)
	if list != "" {
		dst = append(dst, `,"`...)
		dst = append(dst, list...)
		dst = append(dst, `":[`...)
		for i, it := range items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONName(dst, it)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// vendorAcc and productAcc collect a vendor's or product's relations while
// the CVEs are walked in list order.
type vendorAcc struct {
	cves     []int32
	products map[string]*productAcc
}

type productAcc struct {
	cves       []int32
	vulnerable bool // a CPE with a concrete version or "*" is
	entries    bool // a CVE is listed through affected entries
}

// orderKey is what the list order compares of a CVE (see buildCVEs):
// year and number in one word (a number has at most 9 digits), and the
// CVE's place in the entries.
type orderKey struct {
	updated uint64
	yearNum uint64
	k       int32
}

func (ix *Index) buildCVEs(in []CVEEntry, details *Details) error {
	// Newest updated_at first; ties by year, then number, highest first.
	// The keys are sorted with the entries' numbers, 24 bytes each,
	// rather than the numbers alone, each comparison then reading two
	// entries of in at random (0.1 s at 400k CVEs on one core, mostly
	// cache misses). Same comparisons, so the same order, ties included.
	keys := make([]orderKey, len(in))
	for i := range in {
		keys[i] = orderKey{updated: in[i].updated, yearNum: uint64(in[i].year)<<32 | uint64(uint32(in[i].num)), k: int32(i)}
	}
	slices.SortFunc(keys, func(x, y orderKey) int {
		if x.updated != y.updated {
			return cmp.Compare(y.updated, x.updated)
		}
		return cmp.Compare(y.yearNum, x.yearNum)
	})
	order := make([]int32, len(in))
	for i := range keys {
		order[i] = keys[i].k
	}

	// The CVE-to-vendor relations are gathered in ranges of in, each on
	// its own goroutine, while this one does the rest; then the ranges
	// are joined and the vendors encoded, again in parallel. in is walked
	// in its own order, not the list order, which is random against it:
	// the CPEs' names are views into bodies that together are most of
	// the index, and reading them in memory order is what the caches
	// are good at. The lists are sorted once joined.
	rank := make([]int32, len(order)) // the list position of each of in
	for pos, k := range order {
		rank[k] = int32(pos)
	}
	err := ix.placeCVEs(in, order, details)
	details.permute(order)
	ix.details = details
	for p, r := range ix.details.cves {
		if r.kev >= 0 {
			ix.kevs = append(ix.kevs, int32(p))
		}
	}
	ix.kevs = orEmpty(ix.kevs)
	if err != nil {
		return err
	}
	ix.vendorTables.build = func() error {
		parts := max(1, runtime.GOMAXPROCS(0))
		accs := make([]map[string]*vendorAcc, parts)
		var wg sync.WaitGroup
		for w := range accs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				accs[w] = gatherVendors(in, details, rank, len(in)*w/parts, len(in)*(w+1)/parts)
			}()
		}
		wg.Wait()
		return ix.setVendors(joinVendors(accs), parts)
	}
	return nil
}

// placeCVEs fills the CVE lists and the CWE and band relations; details
// are in the order of in.
func (ix *Index) placeCVEs(in []CVEEntry, order []int32, details *Details) error {
	n := len(in)
	ix.cveBodies = make([][]byte, n)
	ix.cveSumEnd = make([]uint32, n)
	ix.cveByName = make(map[uint64]int32, n)
	ix.updated = make([]uint64, n)
	ix.published = make([]uint64, n)
	ix.bandAt = make([]Band, n)
	ix.cvssAt = make([]uint8, n)
	ix.cweOff = make([]int32, n+1)
	ix.cweAt = make([]int32, 0, n)
	ix.createdNotAfterUpdated = true
	// The catalog positions of each "cwes" array, by its text: most CVEs
	// cite one of a few hundred lists, each read once rather than per CVE.
	cweLists := map[string][]int32{}
	for i, k := range order {
		e := &in[k]
		pos := int32(i)
		key := cveKey(e.year, len(e.name)-len("CVE-yyyy-"), e.num)
		// One probe of the map, not a lookup and then an insert: a
		// duplicate is a name that does not grow it.
		ix.cveByName[key] = pos
		if len(ix.cveByName) != i+1 {
			return fmt.Errorf("%w: duplicate %s", ErrInvalid, e.name)
		}
		ix.cveBodies[i] = e.body
		ix.cveSumEnd[i] = uint32(e.summaryEnd)
		ix.updated[i], ix.published[i], ix.bandAt[i] = e.updated, e.published, e.band
		ix.cvssAt[i] = e.cvss10
		if e.published > e.updated {
			ix.createdNotAfterUpdated = false
		}
		if i == 0 || e.published < ix.minPublished {
			ix.minPublished = e.published
		}
		if keys := details.cves[k].keys; len(e.cpes) == 0 {
			ix.noCPE++
			if keys != 0 {
				ix.entryKeyed++
			}
		} else if keys != 0 {
			return fmt.Errorf("%w: %s: vendors and products from affected entries, but NVD's CPEs too", ErrInvalid, e.name)
		}
		if e.band == BandNone {
			ix.noCVSS++
		}
		if e.band == BandCritical {
			ix.bands[BandHigh] = append(ix.bands[BandHigh], pos)
		}
		if e.band != BandNone {
			ix.bands[e.band] = append(ix.bands[e.band], pos)
		}
		at, ok := cweLists[view(e.cwes)]
		if !ok {
			var err error
			if at, err = ix.cweList(e.cwes); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrInvalid, e.name, err)
			}
			cweLists[view(e.cwes)] = at
		}
		for _, p := range at {
			ix.cweCVEs[p] = append(ix.cweCVEs[p], pos)
		}
		ix.cweAt = append(ix.cweAt, at...)
		ix.cweOff[i+1] = int32(len(ix.cweAt))
	}
	ix.counts.CVEs = n
	return nil
}

// cweList returns the catalog positions of the CWEs a "cwes" array
// names, each once, in the order they first appear; names not in the
// catalog are left out.
func (ix *Index) cweList(raw []byte) ([]int32, error) {
	at := []int32{}
	cwes := stringIter{s: scanner{b: raw}}
	for cwes.next() {
		if p, ok := ix.cweByName[string(cwes.val)]; ok && !slices.Contains(at, p) {
			at = append(at, p)
		}
	}
	return at, cwes.err
}

// gatherVendors gathers the vendors and products of the CVEs in[lo:hi],
// whose list positions are in rank: those of their CPEs, and for a CVE
// without any, those of its entry keys (details, in list order).
// Each CVE list it makes holds each position once, in no particular
// order.
func gatherVendors(in []CVEEntry, details *Details, rank []int32, lo, hi int) map[string]*vendorAcc {
	acc := map[string]*vendorAcc{}
	// Consecutive CPEs of a CVE mostly name the same vendor and product:
	// the last ones found are tried first.
	var (
		lastV, lastP string
		v            *vendorAcc
		p            *productAcc
	)
	for k := lo; k < hi; k++ {
		pos := rank[k]
		for _, r := range in[k].cpes {
			if v == nil || r.vendor != lastV {
				if !IsName(r.vendor) {
					continue
				}
				if v = acc[r.vendor]; v == nil {
					v = &vendorAcc{products: map[string]*productAcc{}}
					acc[r.vendor] = v
				}
				lastV, p = r.vendor, nil
			}
			if !lastIs(v.cves, pos) {
				v.cves = append(v.cves, pos)
			}
			if !IsName(r.product) {
				continue
			}
			if p == nil || r.product != lastP {
				if p = v.products[r.product]; p == nil {
					p = &productAcc{}
					v.products[r.product] = p
				}
				lastP = r.product
			}
			if !lastIs(p.cves, pos) {
				p.cves = append(p.cves, pos)
			}
			if r.vulnerable && (r.version == "*" || IsName(r.version)) {
				p.vulnerable = true
			}
		}
		if keys := details.cves[pos].keys; keys != 0 && len(in[k].cpes) == 0 {
			it := entryKeysIter{s: details.strs[keys]}
			for it.next() {
				if v == nil || it.vendor != lastV {
					if v = acc[it.vendor]; v == nil {
						v = &vendorAcc{products: map[string]*productAcc{}}
						acc[it.vendor] = v
					}
					lastV, p = it.vendor, nil
				}
				if !lastIs(v.cves, pos) {
					v.cves = append(v.cves, pos)
				}
				if p == nil || it.product != lastP {
					if p = v.products[it.product]; p == nil {
						p = &productAcc{}
						v.products[it.product] = p
					}
					lastP = it.product
				}
				if !lastIs(p.cves, pos) {
					p.cves = append(p.cves, pos)
				}
				p.entries = true
			}
		}
	}
	return acc
}

// joinVendors joins what gatherVendors found in ranges of the CVEs.
// encodeVendors sorts the CVE lists.
func joinVendors(accs []map[string]*vendorAcc) map[string]*vendorAcc {
	all := accs[0]
	for _, acc := range accs[1:] {
		for name, a := range acc {
			b := all[name]
			if b == nil {
				all[name] = a
				continue
			}
			b.cves = append(b.cves, a.cves...)
			for pname, pa := range a.products {
				pb := b.products[pname]
				if pb == nil {
					b.products[pname] = pa
					continue
				}
				pb.cves = append(pb.cves, pa.cves...)
				pb.vulnerable = pb.vulnerable || pa.vulnerable
				pb.entries = pb.entries || pa.entries
			}
		}
	}
	return all
}

// vendorPart is the encoded vendors of a range of names and their
// products, with offsets from the part's own start, until joinParts puts
// the parts together.
type vendorPart struct {
	vendors, products packed
	vendorRecs        []vendorRec
	productRecs       []productRec
	cves              []int32
	productNames      []string
}

// encodeVendors encodes the vendors named names, in this order, and their
// products, each vendor's in name order: their summaries, CVE lists and
// records, not their bodies, which their first request makes (see
// Vendor and Product): sorting each product's versions in version order
// and writing the bodies was a fifth of a load on one core, for bodies
// few are ever asked. A first pass sorts the lists and counts the bytes,
// so that the second writes into slices made at their size: grown by
// append, they were copied over and over into fresh memory.
func encodeVendors(names []string, acc map[string]*vendorAcc) *vendorPart {
	w := &vendorPart{}
	pnamesOf := make([][]string, len(names))
	var nSums, nPSums, nCVEs, nProducts int
	for i, name := range names {
		a := acc[name]
		pnames := sortedKeys(a.products)
		pnamesOf[i] = pnames
		slices.Sort(a.cves) // in list order
		nSums += summarySize(name, nil)
		nCVEs += len(a.cves)
		nProducts += len(pnames)
		for _, pname := range pnames {
			pa := a.products[pname]
			slices.Sort(pa.cves)
			nPSums += summarySize(pname, nil)
			nCVEs += len(pa.cves)
		}
	}
	w.cves = make([]int32, 0, nCVEs)
	w.vendors = packed{text: make([]byte, 0, nSums), offs: make([]uint32, 1, len(names)+1)}
	w.products = packed{text: make([]byte, 0, nPSums), offs: make([]uint32, 1, nProducts+1)}
	w.vendorRecs = make([]vendorRec, 0, len(names))
	w.productRecs = make([]productRec, 0, nProducts)
	w.productNames = make([]string, 0, nProducts)
	for i, name := range names {
		a := acc[name]
		pnames := pnamesOf[i]
		w.vendors.addWith(func(dst []byte) []byte { return appendNameSummary(dst, name, "", nil) })
		v := vendorRec{
			cves:   appendRun(&w.cves, a.cves),
			prodLo: uint32(len(w.productRecs)),
		}
		for _, pname := range pnames {
			pa := a.products[pname]
			w.products.addWith(func(dst []byte) []byte { return appendNameSummary(dst, pname, "", nil) })
			w.productRecs = append(w.productRecs, productRec{
				cves:       appendRun(&w.cves, pa.cves),
				vulnerable: pa.vulnerable,
				entries:    pa.entries,
			})
		}
		v.prodHi = uint32(len(w.productRecs))
		w.vendorRecs = append(w.vendorRecs, v)
		w.productNames = append(w.productNames, pnames...)
	}
	return w
}

// summarySize is the size appendNameSummary writes for name with items
// (the summary alone for nil) when they are plain (see plainJSON): more
// only when some must be escaped.
func summarySize(name string, items []string) int {
	n := len(`{"name":"","human_name":""}`) + 2*len(name)
	if items != nil {
		n += len(`,"products":[]`) + max(0, len(items)-1) // the commas
		for _, it := range items {
			n += len(it) + 2
		}
	}
	return n
}

// setVendors encodes the vendors, on parts goroutines, and puts them in
// the index by name and in name order.
func (ix *Index) setVendors(acc map[string]*vendorAcc, parts int) error {
	names := sortedKeys(acc)
	done := make([]*vendorPart, parts)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[w] = encodeVendors(names[len(names)*w/parts:len(names)*(w+1)/parts], acc)
		}()
	}
	wg.Wait()
	return ix.joinParts(names, done)
}

// joinParts puts the parts, in order, into the index.
func (ix *Index) joinParts(names []string, parts []*vendorPart) error {
	var nCVEs, nProducts, nKeys int
	vendors := make([]packed, len(parts))
	products := make([]packed, len(parts))
	for i, w := range parts {
		nCVEs += len(w.cves)
		nProducts += len(w.productRecs)
		vendors[i], products[i] = w.vendors, w.products
		for _, p := range w.productNames {
			nKeys += 4 + len(p)
		}
	}
	for _, name := range names {
		nKeys += len(name)
	}
	for _, c := range []struct {
		what string
		n    int
	}{{"vendor and product CVE lists", nCVEs}, {"names", nKeys}} {
		if err := fitsOffsets(c.what, c.n); err != nil {
			return err
		}
	}
	var productNames []string
	if len(parts) == 1 {
		// One part (one core): its slices, made at their size, are the
		// index's as they are, not copied into fresh ones.
		w := parts[0]
		ix.vendors, ix.products = w.vendors, w.products
		ix.vendorRecs, ix.productRecs, ix.vpCVEs = w.vendorRecs, w.productRecs, w.cves
		productNames = w.productNames
	} else {
		ix.joinCopies(parts, vendors, products, nCVEs, nProducts)
		productNames = make([]string, 0, nProducts)
		for _, w := range parts {
			productNames = append(productNames, w.productNames...)
		}
	}
	for _, p := range []packed{ix.vendors, ix.products} {
		if err := fitsOffsets("vendor and product summaries", len(p.text)); err != nil {
			return err
		}
	}

	// The maps' keys are views into one slice made at its final size, so
	// they are not objects of their own either.
	ix.keys = make([]byte, 0, nKeys)
	ix.vendorByName = make(map[string]uint32, len(names))
	ix.productByName = make(map[string]uint32, nProducts)
	for i, name := range names {
		from := len(ix.keys)
		ix.keys = append(ix.keys, name...)
		ix.vendorByName[view(ix.keys[from:])] = uint32(i)
		v := &ix.vendorRecs[i]
		v.key = run{uint32(from), uint32(len(ix.keys))}
		for k := v.prodLo; k < v.prodHi; k++ {
			from := len(ix.keys)
			ix.keys = appendProductKey(ix.keys, uint32(i), productNames[k])
			ix.productByName[view(ix.keys[from:])] = k
			ix.productRecs[k].key = run{uint32(from), uint32(len(ix.keys))}
		}
	}
	ix.affs = make([]productAff, nProducts)
	ix.vendorBodies = make([]lazyBody, len(names))
	ix.productBodies = make([]lazyBody, nProducts)
	ix.nVendors, ix.nProducts = len(names), nProducts
	ix.vendorSearch = &lazySearch{names: func() []string {
		out := make([]string, len(ix.vendorRecs))
		for i := range ix.vendorRecs {
			out[i] = view(ix.vendorRecs[i].key.of(ix.keys))
		}
		return out
	}}
	ix.productSearch = &lazySearch{names: func() []string {
		out := make([]string, len(ix.productRecs))
		for k := range ix.productRecs {
			_, out[k] = ix.productNames(uint32(k))
		}
		return out
	}}
	return nil
}

// joinCopies copies the parts' summaries, CVE lists and records one after
// the other into the index's, moving their offsets.
func (ix *Index) joinCopies(parts []*vendorPart, vendors, products []packed, nCVEs, nProducts int) {
	ix.vendors, ix.products = joinPacked(vendors), joinPacked(products)
	nVendors := 0
	for _, w := range parts {
		nVendors += len(w.vendorRecs)
	}
	ix.vendorRecs = make([]vendorRec, 0, nVendors)
	ix.productRecs = make([]productRec, 0, nProducts)
	ix.vpCVEs = make([]int32, 0, nCVEs)
	for _, w := range parts {
		// Where the part's CVE lists and products go.
		cves, products := uint32(len(ix.vpCVEs)), uint32(len(ix.productRecs))
		for _, v := range w.vendorRecs {
			v.cves = v.cves.moved(cves)
			v.prodLo, v.prodHi = v.prodLo+products, v.prodHi+products
			ix.vendorRecs = append(ix.vendorRecs, v)
		}
		for _, p := range w.productRecs {
			p.cves = p.cves.moved(cves)
			ix.productRecs = append(ix.productRecs, p)
		}
		ix.vpCVEs = append(ix.vpCVEs, w.cves...)
	}
}

// productNames returns the names of the product at k and of its vendor.
func (ix *Index) productNames(k uint32) (vendorName, productName string) {
	key := ix.productRecs[k].key.of(ix.keys)
	vendor := uint32(key[0])<<24 | uint32(key[1])<<16 | uint32(key[2])<<8 | uint32(key[3])
	return view(ix.vendorRecs[vendor].key.of(ix.keys)), view(key[4:])
}

// appendProductKey appends a product's key in productByName: its vendor's
// position in a fixed width, so that no two pairs of names make the same
// key, then its name.
func appendProductKey(dst []byte, vendor uint32, product string) []byte {
	dst = append(dst, byte(vendor>>24), byte(vendor>>16), byte(vendor>>8), byte(vendor))
	return append(dst, product...)
}

// cveKey is the key in cveByName of the name CVE-<year>-<number> whose
// number has digits digits: a number, so the map has no pointers for the
// garbage collector to follow. Names differing only by leading zeros get
// different keys.
func cveKey(year, digits, num int) uint64 {
	return uint64(year)<<40 | uint64(digits)<<32 | uint64(uint32(num))
}

type reportSummary struct {
	ID        string   `json:"id"`
	CreatedAt string   `json:"created_at"`
	Handlers  []string `json:"handlers"`
}

type reportBody struct {
	ID        string            `json:"id"`
	CreatedAt string            `json:"created_at"`
	Handlers  []string          `json:"handlers"`
	Alerts    []json.RawMessage `json:"alerts"`
}

type alertSummary struct {
	ID        int64    `json:"id"`
	CVE       string   `json:"cve"`
	CreatedAt string   `json:"created_at"`
	Handlers  Handlers `json:"handlers"`
}

// SortReports sorts reports as the API lists them: created_at newest
// first; reports of the same created_at (builds given the same build time)
// by build order, newest first, which is the number the build appends to
// their ids ("-2", "-3"... after the build time, none counting as 1, so
// "-10" comes before "-9"); reports that still tie, which no build makes,
// by id in byte order.
func SortReports(reports []Report) {
	slices.SortStableFunc(reports, func(a, b Report) int { return compareReports(&a, &b) })
}

func compareReports(a, b *Report) int {
	if c := cmp.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
		return c
	}
	if c := cmp.Compare(buildNumber(b.ID), buildNumber(a.ID)); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// buildNumber is the number n of a report id "BASE-n" (n >= 2, written
// without leading zeros, as the build writes it), and 1 for any other id.
func buildNumber(id string) int {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || i+1 >= len(id) || id[i+1] == '0' {
		return 1
	}
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return 1
		}
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 2 {
		return 1
	}
	return n
}

func (ix *Index) buildReports(in []Report) error {
	order := make([]*Report, len(in))
	for i := range in {
		order[i] = &in[i]
	}
	slices.SortStableFunc(order, compareReports)
	ix.reports = make([][]byte, len(order))
	ix.reportByID = make(map[string]*report, len(order))
	alertIDs := map[int64]string{}
	var hist []histInput
	for i, r := range order {
		if r.ID == "" {
			return fmt.Errorf("%w: report without id", ErrInvalid)
		}
		if _, dup := ix.reportByID[r.ID]; dup {
			return fmt.Errorf("%w: duplicate report %q", ErrInvalid, r.ID)
		}
		alerts := make([]*Alert, len(r.Alerts))
		for k := range r.Alerts {
			alerts[k] = &r.Alerts[k]
		}
		// Newest first, ties by id descending.
		sort.SliceStable(alerts, func(a, b int) bool {
			if alerts[a].CreatedAt != alerts[b].CreatedAt {
				return alerts[a].CreatedAt > alerts[b].CreatedAt
			}
			return alerts[a].ID > alerts[b].ID
		})
		rep := &report{events: make(map[int64][]byte, len(alerts))}
		summaries := make([]json.RawMessage, len(alerts))
		handlers := map[string]struct{}{}
		for k, a := range alerts {
			if other, dup := alertIDs[a.ID]; dup {
				return fmt.Errorf("%w: alert id %d in reports %q and %q", ErrInvalid, a.ID, other, r.ID)
			}
			alertIDs[a.ID] = r.ID
			h := Handlers{Products: orEmpty(a.Handlers.Products), Vendors: orEmpty(a.Handlers.Vendors)}
			for _, s := range h.Products {
				handlers[s] = struct{}{}
			}
			for _, s := range h.Vendors {
				handlers[s] = struct{}{}
			}
			summaries[k] = encode(alertSummary{a.ID, a.CVE, a.CreatedAt, h})
			events, err := encodeEvents(a)
			if err != nil {
				return fmt.Errorf("%w: report %q alert %d: %v", ErrInvalid, r.ID, a.ID, err)
			}
			rep.events[a.ID] = events
			hist = append(hist, histInput{a, events})
		}
		hs := sortedKeys(handlers)
		rep.body = encode(reportBody{r.ID, r.CreatedAt, hs, summaries})
		rep.alerts = encode(summaries)
		ix.reports[i] = encode(reportSummary{r.ID, r.CreatedAt, hs})
		ix.reportByID[r.ID] = rep
		ix.counts.Alerts += len(alerts)
	}
	ix.counts.Reports = len(order)
	ix.buildHistory(hist)
	return nil
}

// eventRank is the position of each event type in the API's order.
var eventRank = map[string]int{
	EventNewCVE: 0, EventSummaryChanged: 1, EventCPEsChanged: 2,
	EventCVSSChanged: 3, EventCWEsChanged: 4, EventReferencesChanged: 5,
	EventAffectedChanged: 6, EventEPSSChanged: 7,
}

func encodeEvents(a *Alert) ([]byte, error) {
	events := make([]Event, len(a.Events))
	copy(events, a.Events)
	for _, e := range events {
		if _, ok := eventRank[e.Type]; !ok {
			return nil, fmt.Errorf("unknown event type %q", e.Type)
		}
		if d := strings.TrimSpace(string(e.Details)); !strings.HasPrefix(d, "{") || !json.Valid(e.Details) {
			return nil, fmt.Errorf("%s: details are not a JSON object", e.Type)
		}
	}
	// Oldest first, then in the order of the event-type list.
	sort.SliceStable(events, func(x, y int) bool {
		if events[x].CreatedAt != events[y].CreatedAt {
			return events[x].CreatedAt < events[y].CreatedAt
		}
		return eventRank[events[x].Type] < eventRank[events[y].Type]
	})
	return encode(events), nil
}

// HumanName is a vendor's or product's display name: the name split on
// "_", each part with its first letter upper case and the rest lower case,
// joined by spaces ("ubuntu_linux" -> "Ubuntu Linux", "pan-os" -> "Pan-os").
func HumanName(name string) string {
	parts := strings.Split(name, "_")
	for i, p := range parts {
		if p == "" {
			continue
		}
		r := []rune(strings.ToLower(p))
		parts[i] = strings.ToUpper(string(r[0])) + string(r[1:])
	}
	return strings.Join(parts, " ")
}

// scoreTenths is a CVSS score in tenths, kept to 0-100.
func scoreTenths(score float64) uint8 {
	t := score*10 + 0.5
	switch {
	case !(t >= 1): // negative or NaN
		return 0
	case t >= 100:
		return 100
	}
	return uint8(t)
}

func bandOf(score float64) Band {
	// Scores have one decimal; compare in tenths to avoid float edges.
	t := int(score*10 + 0.5)
	switch {
	case t >= 90:
		return BandCritical
	case t >= 70:
		return BandHigh
	case t >= 40:
		return BandMedium
	case t >= 1:
		return BandLow
	}
	return BandNone
}

// IsName reports whether a CPE component names a vendor, product or
// version: not empty and not the logical values ANY (*) and NA (-).
func IsName(s string) bool { return s != "" && s != "*" && s != "-" }

func lastIs(s []int32, v int32) bool { return len(s) > 0 && s[len(s)-1] == v }

// sortedKeys returns m's keys in byte order, never nil, so an empty set
// encodes as [] rather than null.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// CWENumber parses "CWE-<n>" (any letter case, n one to nine decimal
// digits) and returns n: the one parser of CWE names, for the catalog,
// the NVD records and the API's paths.
func CWENumber(name string) (int, bool) {
	if len(name) < 5 || !strings.EqualFold(name[:4], "CWE-") {
		return 0, false
	}
	return parseDecimal(name[4:])
}

// cveNumber parses "CVE-<year>-<number>" (any letter case).
func cveNumber(name string) (year, num int, ok bool) {
	if len(name) < 6 || !strings.EqualFold(name[:4], "CVE-") {
		return 0, 0, false
	}
	y, n, found := strings.Cut(name[4:], "-")
	if !found {
		return 0, 0, false
	}
	if year, ok = parseDecimal(y); !ok || len(y) != 4 {
		return 0, 0, false
	}
	if num, ok = parseDecimal(n); !ok {
		return 0, 0, false
	}
	return year, num, true
}

// parseDecimal parses 1 to 9 ASCII digits.
func parseDecimal(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
