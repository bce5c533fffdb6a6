package index

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-json"
)

// Band is a CVSS severity band of GET /cve?cvss=.
type Band int

// The bands on cvss.score: low 0.1–3.9, medium 4.0–6.9, high 7.0–10.0. A
// score of 0 (none known) is in no band.
const (
	BandNone Band = iota // no filter: every CVE
	BandLow
	BandMedium
	BandHigh
)

// Meta describes the snapshot an Index was built from.
type Meta struct {
	// ID identifies the snapshot's content; it changes whenever the
	// snapshot does and becomes the ETag.
	ID string
	// BuiltAt is the snapshot's build time, "YYYY-MM-DD HH:MM:SSZ".
	BuiltAt string
}

// Index is one snapshot, ready to answer queries. It is immutable and safe
// for concurrent use.
type Index struct {
	meta Meta
	etag string

	cwes      [][]byte         // CWE bodies by number ascending; also the list items
	cweByName map[string]int32 // canonical name -> position in cwes
	cweCVEs   [][]int32        // per position in cwes: CVE positions in list order

	cveSummaries [][]byte         // CVE summary bodies in list order
	cveBodies    [][]byte         // full CVE bodies, same positions
	cveByName    map[string]int32 // canonical name -> position
	bands        [4][]int32       // BandNone is nil: the identity list

	vendors      [][]byte // vendor summaries, name ascending
	vendorByName map[string]*vendor

	reports    [][]byte // report summaries, newest first
	reportByID map[string]*report

	counts Counts
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

type vendor struct {
	body     []byte   // {"name","human_name","products"}
	products [][]byte // product summaries, name ascending
	byName   map[string]*product
	cves     []int32
}

type product struct {
	body []byte // {"name","human_name","versions"}
	cves []int32
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
	ix := &Index{meta: meta, etag: `"` + meta.ID + `"`}
	if err := ix.buildCWEs(d.CWEs); err != nil {
		return nil, err
	}
	if err := ix.buildCVEs(d.CVEs); err != nil {
		return nil, err
	}
	if err := ix.buildReports(d.Reports); err != nil {
		return nil, err
	}
	return ix, nil
}

func (ix *Index) buildCWEs(in []CWE) error {
	type numbered struct {
		n int
		c *CWE
	}
	list := make([]numbered, 0, len(in))
	for i := range in {
		n, ok := cweNumber(in[i].Name)
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

type cveSummary struct {
	Name      string `json:"name"`
	Summary   string `json:"summary"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

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

// vendorAcc and productAcc collect a vendor's or product's relations while
// the CVEs are walked in list order.
type vendorAcc struct {
	cves     []int32
	products map[string]*productAcc
}

type productAcc struct {
	cves     []int32
	versions map[string]struct{}
}

func (ix *Index) buildCVEs(in []CVE) error {
	type keyed struct {
		year, num int
		c         *CVE
	}
	list := make([]keyed, 0, len(in))
	for i := range in {
		y, n, ok := cveNumber(in[i].Name)
		if !ok {
			return fmt.Errorf("%w: CVE name %q", ErrInvalid, in[i].Name)
		}
		list = append(list, keyed{y, n, &in[i]})
	}
	// Newest updated_at first; ties by year, then number, highest first.
	sort.Slice(list, func(a, b int) bool {
		x, y := list[a], list[b]
		if x.c.UpdatedAt != y.c.UpdatedAt {
			return x.c.UpdatedAt > y.c.UpdatedAt
		}
		if x.year != y.year {
			return x.year > y.year
		}
		return x.num > y.num
	})

	n := len(list)
	ix.cveSummaries = make([][]byte, n)
	ix.cveBodies = make([][]byte, n)
	ix.cveByName = make(map[string]int32, n)
	vendors := map[string]*vendorAcc{}
	for i, e := range list {
		c := e.c
		pos := int32(i)
		if _, dup := ix.cveByName[c.Name]; dup {
			return fmt.Errorf("%w: duplicate %s", ErrInvalid, c.Name)
		}
		ix.cveByName[c.Name] = pos
		ix.cveSummaries[i] = encode(cveSummary{c.Name, c.Summary, c.CreatedAt, c.UpdatedAt})
		ix.cveBodies[i] = encode(cveBody{
			Name: c.Name, Summary: c.Summary, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
			CPEs: orEmpty(c.CPEs), CWEs: orEmpty(c.CWEs), CVSS: c.CVSS,
			References: orEmpty(c.References),
		})
		if b := bandOf(c.CVSS.Score); b != BandNone {
			ix.bands[b] = append(ix.bands[b], pos)
		}
		for _, name := range c.CWEs {
			if p, ok := ix.cweByName[name]; ok && !lastIs(ix.cweCVEs[p], pos) {
				ix.cweCVEs[p] = append(ix.cweCVEs[p], pos)
			}
		}
		for k := range c.CPEs {
			cpe := &c.CPEs[k]
			if !IsName(cpe.Vendor) {
				continue
			}
			v := vendors[cpe.Vendor]
			if v == nil {
				v = &vendorAcc{products: map[string]*productAcc{}}
				vendors[cpe.Vendor] = v
			}
			if !lastIs(v.cves, pos) {
				v.cves = append(v.cves, pos)
			}
			if !IsName(cpe.Product) {
				continue
			}
			p := v.products[cpe.Product]
			if p == nil {
				p = &productAcc{versions: map[string]struct{}{}}
				v.products[cpe.Product] = p
			}
			if !lastIs(p.cves, pos) {
				p.cves = append(p.cves, pos)
			}
			if IsName(cpe.Version) {
				p.versions[cpe.Version] = struct{}{}
			}
		}
	}
	ix.counts.CVEs = n
	ix.buildVendors(vendors)
	return nil
}

func (ix *Index) buildVendors(acc map[string]*vendorAcc) {
	names := sortedKeys(acc)
	ix.vendors = make([][]byte, len(names))
	ix.vendorByName = make(map[string]*vendor, len(names))
	for i, name := range names {
		a := acc[name]
		human := HumanName(name)
		ix.vendors[i] = encode(nameSummary{name, human})
		pnames := sortedKeys(a.products)
		v := &vendor{
			body:     encode(vendorBody{name, human, pnames}),
			products: make([][]byte, len(pnames)),
			byName:   make(map[string]*product, len(pnames)),
			cves:     a.cves,
		}
		for k, pname := range pnames {
			pa := a.products[pname]
			versions := sortedKeys(pa.versions)
			sort.SliceStable(versions, func(x, y int) bool {
				return CompareVersions(versions[x], versions[y]) < 0
			})
			ph := HumanName(pname)
			v.products[k] = encode(nameSummary{pname, ph})
			v.byName[pname] = &product{body: encode(productBody{pname, ph, versions}), cves: pa.cves}
		}
		ix.vendorByName[name] = v
		ix.counts.Products += len(pnames)
	}
	ix.counts.Vendors = len(names)
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

func (ix *Index) buildReports(in []Report) error {
	order := make([]*Report, len(in))
	for i := range in {
		order[i] = &in[i]
	}
	// Newest first, ties by id.
	sort.SliceStable(order, func(a, b int) bool {
		if order[a].CreatedAt != order[b].CreatedAt {
			return order[a].CreatedAt > order[b].CreatedAt
		}
		return order[a].ID < order[b].ID
	})
	ix.reports = make([][]byte, len(order))
	ix.reportByID = make(map[string]*report, len(order))
	alertIDs := map[int64]string{}
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
		}
		hs := sortedKeys(handlers)
		rep.body = encode(reportBody{r.ID, r.CreatedAt, hs, summaries})
		rep.alerts = encode(summaries)
		ix.reports[i] = encode(reportSummary{r.ID, r.CreatedAt, hs})
		ix.reportByID[r.ID] = rep
		ix.counts.Alerts += len(alerts)
	}
	ix.counts.Reports = len(order)
	return nil
}

// eventRank is the position of each event type in the API's order.
var eventRank = map[string]int{
	EventNewCVE: 0, EventSummaryChanged: 1, EventCPEsChanged: 2,
	EventCVSSChanged: 3, EventCWEsChanged: 4, EventReferencesChanged: 5,
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

func bandOf(score float64) Band {
	// Scores have one decimal; compare in tenths to avoid float edges.
	t := int(score*10 + 0.5)
	switch {
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

// cweNumber parses "CWE-<n>" (any letter case) and returns n.
func cweNumber(name string) (int, bool) {
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
