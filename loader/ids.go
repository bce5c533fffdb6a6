package loader

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// idTables keeps every id the API shows that must not change from one
// build to the next: the cpe_id of each CPE URI, the id of each CVSS record
// (CVE, metric version, source), the id of each reference record (CVE,
// link), and the next free alert id. A snapshot stores its tables so the
// next build (-previous) continues them; an id, once given, is never given
// to anything else, even after the thing it named disappears.
type idTables struct {
	cpe       map[string]int64
	cvss      map[cvssKey]int64
	ref       map[refKey]int64
	nextCPE   int64
	nextCVSS  int64
	nextRef   int64
	nextAlert int64
	// fresh is set for a build without a previous snapshot, which
	// assigns once, into empty tables: the CVSS and reference ids are
	// then numbered from 1 in the CVEs' order without being kept in
	// cvss and ref (at 400k CVEs, 2.2 million entries), and writeIDs
	// lists them from the CVEs.
	fresh bool
	// cold holds the references of the CVEs it spilled (see
	// coldStore), which a fresh assign counts and writeIDs lists from
	// it; nil for none.
	cold *coldStore
	// prev are the previous snapshot's tables as stored, which the
	// write copies before the new ids (see carriedIDs): the CVSS and
	// reference tables then hold only the records of the CVEs loaded
	// (loadCVEs) and the new ones; nil for none.
	prev *carriedIDs
	// carried are, by the CVEs assign is given, the bodies carried over
	// from the previous snapshot (nil: none): those CVEs have their ids
	// already, and assign skips them.
	carried [][]byte
}

type cvssKey struct{ cve, version, source string }

// refKey names a reference record: the n-th (from 0) reference of a CVE
// with that link. NVD repeats a link under a second source, and each entry
// is a record of its own.
type refKey struct {
	cve, link string
	n         int
}

func newIDTables() *idTables {
	return &idTables{
		cpe: map[string]int64{}, cvss: map[cvssKey]int64{}, ref: map[refKey]int64{},
		nextCPE: 1, nextCVSS: 1, nextRef: 1, nextAlert: 1,
	}
}

// idRecord is one line of ids.jsonl.zst. Table is "cpe" (URI), "cvss"
// (CVE, Version, Source), "ref" (CVE, Link, N: the occurrence of the link)
// or "next" (ID is the next free alert id; the other counters follow from
// the tables' largest ids).
type idRecord struct {
	Table   string `json:"table"`
	ID      int64  `json:"id"`
	URI     string `json:"uri,omitempty"`
	CVE     string `json:"cve,omitempty"`
	Version string `json:"version,omitempty"`
	Source  string `json:"source,omitempty"`
	Link    string `json:"link,omitempty"`
	N       int    `json:"n,omitempty"`
}

func (t *idTables) add(r idRecord) error {
	if r.ID < 1 {
		return fmt.Errorf("%s id %d is not positive", r.Table, r.ID)
	}
	switch r.Table {
	case "cpe":
		t.cpe[r.URI] = r.ID
		t.nextCPE = max(t.nextCPE, r.ID+1)
	case "cvss":
		t.cvss[cvssKey{r.CVE, r.Version, r.Source}] = r.ID
		t.nextCVSS = max(t.nextCVSS, r.ID+1)
	case "ref":
		t.ref[refKey{r.CVE, r.Link, r.N}] = r.ID
		t.nextRef = max(t.nextRef, r.ID+1)
	case "next":
		t.nextAlert = max(t.nextAlert, r.ID)
	default:
		return fmt.Errorf("unknown id table %q", r.Table)
	}
	return nil
}

// idsChunkBytes is the decoded size at which a chunk of ids.jsonl.zst
// closes (a variable for tests).
var idsChunkBytes = chunkTarget

// writeIDs writes the tables as ids.jsonl.zst holds them: each table by
// name and id, one table at a time, without making every record at once
// (at 400k CVEs, 2.6 million of them), then the "next" record.
// Each table starts a chunk of its own, and "next" comes last, so the
// chunks of a table are a function of its own lines: since a build only
// adds ids after the largest, a refresh leaves every chunk of a table but
// its last byte for byte as it was (the same blobs to publish and pull).
// With spend, each table is let go (t's maps are nil) once listed.
// With t.fresh, the CVSS and reference tables are listed from cves.
func writeIDs(path string, enc *zstd.Encoder, t *idTables, cves []index.CVE, spend bool) (FileInfo, error) {
	w, err := newChunkWriter(path, enc)
	if err != nil {
		return FileInfo{}, err
	}
	w.closeAt = idsChunkBytes
	n := 0
	line := func(r *idRecord) error {
		n++
		b, err := marshal(r)
		if err == nil {
			err = w.line(b)
		}
		if err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		return nil
	}
	// from is the first id to list of a table: those before are the
	// previous snapshot's, copied as stored.
	var copyErr error
	from := func(k int) int64 {
		if t.prev == nil {
			return 1
		}
		if copyErr == nil {
			copyErr = t.prev.writeCarried(w, k, enc)
		}
		return t.prev.tables[k].next
	}
	defer func() { t.prev = nil }() // let go once written
	err = writeTable(&t.cpe, spend, from(0), func(uri string, id int64) error { return line(&idRecord{Table: "cpe", ID: id, URI: uri}) })
	if err == nil {
		err = w.flush()
	}
	if err == nil && t.fresh {
		// Numbered from 1 in the CVEs' order (see assignFresh).
		next := int64(1)
		for i := 0; i < len(cves) && err == nil; i++ {
			c := &cves[i]
			for k := 0; k < len(c.Metrics) && err == nil; k++ {
				if m := &c.Metrics[k]; m.ID == next {
					err = line(&idRecord{Table: "cvss", ID: m.ID, CVE: c.Name, Version: m.Version, Source: m.Source})
					next++
				}
			}
		}
		if err == nil {
			err = w.flush()
		}
		next = 1
		var buf []byte
		for i := 0; i < len(cves) && err == nil; i++ {
			refs := cves[i].References
			if t.cold != nil {
				if refs, buf, err = t.cold.refsOf(&cves[i], buf); err != nil {
					break
				}
			}
			for _, k := range refKeys(cves[i].Name, refs) {
				if err = line(&idRecord{Table: "ref", ID: next, CVE: k.cve, Link: k.link, N: k.n}); err != nil {
					break
				}
				next++
			}
		}
	}
	if err == nil && !t.fresh {
		err = writeTable(&t.cvss, spend, from(1), func(k cvssKey, id int64) error {
			return line(&idRecord{Table: "cvss", ID: id, CVE: k.cve, Version: k.version, Source: k.source})
		})
	}
	if err == nil && !t.fresh {
		if err = w.flush(); err == nil {
			err = writeTable(&t.ref, spend, from(2), func(k refKey, id int64) error {
				return line(&idRecord{Table: "ref", ID: id, CVE: k.cve, Link: k.link, N: k.n})
			})
		}
	}
	if err == nil {
		if err = w.flush(); err == nil {
			err = line(&idRecord{Table: "next", ID: t.nextAlert})
		}
	}
	if err == nil {
		err = copyErr
	}
	if err != nil {
		w.close()
		return FileInfo{}, err
	}
	return w.close()
}

// writeTable passes the entries of one table from id from on to f by
// id; with spend, the table is let go (nil) once listed.
func writeTable[K comparable](table *map[K]int64, spend bool, from int64, f func(K, int64) error) error {
	type entry struct {
		key K
		id  int64
	}
	list := make([]entry, 0, len(*table))
	for k, id := range *table {
		if id >= from {
			list = append(list, entry{k, id})
		}
	}
	if spend {
		*table = nil
	}
	slices.SortFunc(list, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	for _, e := range list {
		if err := f(e.key, e.id); err != nil {
			return err
		}
	}
	return nil
}

// assign gives every CPE URI, CVSS record and reference of cves its id,
// keeping the ids the tables already hold and numbering new ones in a
// deterministic order (CVEs are in name order, records in source order).
// It writes cpe_id into the CPEs and the id into each Metric. The CPEs
// of a CVE spilled in t.cold are read back from it and get their ids
// when their body is made; the error is for one that cannot be read.
func (t *idTables) assign(cves []index.CVE) error {
	// New URIs are numbered in byte order, so the numbering does not depend
	// on which CVE happens to mention a URI first.
	var fresh []string
	var buf []byte
	skip := func(i int) bool { return i < len(t.carried) && t.carried[i] != nil }
	for i := range cves {
		if skip(i) {
			continue
		}
		if k := t.cold.find(cves[i].Name); k >= 0 {
			// Spilled: the URIs are read back, and each new one
			// copied once.
			var err error
			buf, err = t.cold.eachCPEURI(k, buf, func(uri []byte) {
				if _, ok := t.cpe[string(uri)]; !ok {
					u := string(uri)
					t.cpe[u] = 0
					fresh = append(fresh, u)
				}
			})
			if err != nil {
				return err
			}
			continue
		}
		for _, c := range cves[i].CPEs {
			if _, ok := t.cpe[c.URI]; !ok {
				t.cpe[c.URI] = 0
				fresh = append(fresh, c.URI)
			}
		}
	}
	if t.cold != nil {
		// The bodies' CPEs take their ids from it (see coldStore.fill).
		t.cold.cpeIDs = t.cpe
	}
	sort.Strings(fresh)
	for _, uri := range fresh {
		t.cpe[uri] = t.nextCPE
		t.nextCPE++
	}
	for i := range cves {
		if skip(i) {
			continue
		}
		c := &cves[i]
		for k := range c.CPEs {
			c.CPEs[k].ID = t.cpe[c.CPEs[k].URI]
		}
		if t.fresh {
			t.assignFresh(c)
			continue
		}
		for k := range c.Metrics {
			m := &c.Metrics[k]
			key := cvssKey{c.Name, m.Version, m.Source}
			if id, ok := t.cvss[key]; ok {
				m.ID = id
			} else {
				m.ID = t.nextCVSS
				t.cvss[key] = m.ID
				t.nextCVSS++
			}
		}
		for _, key := range refKeys(c.Name, c.References) {
			if _, ok := t.ref[key]; !ok {
				t.ref[key] = t.nextRef
				t.nextRef++
			}
		}
	}
	return nil
}

// assignFresh numbers c's CVSS records and references as assign does into
// empty tables (see idTables.fresh): a record is new unless c has one of
// the same version and source before it, and every reference is new.
func (t *idTables) assignFresh(c *index.CVE) {
	for k := range c.Metrics {
		m := &c.Metrics[k]
		m.ID = 0
		for _, e := range c.Metrics[:k] {
			if e.Version == m.Version && e.Source == m.Source {
				m.ID = e.ID
				break
			}
		}
		if m.ID == 0 {
			m.ID = t.nextCVSS
			t.nextCVSS++
		}
	}
	t.nextRef += int64(t.cold.refCount(c))
}

// alertID returns a fresh alert id.
func (t *idTables) alertID() int64 {
	id := t.nextAlert
	t.nextAlert++
	return id
}

// refKeys names each reference of a CVE: its link and how many earlier
// references of the CVE have the same link.
func refKeys(cve string, refs []index.Reference) []refKey {
	keys := make([]refKey, len(refs))
	seen := make(map[string]int, len(refs))
	for i, r := range refs {
		keys[i] = refKey{cve, r.Link, seen[r.Link]}
		seen[r.Link]++
	}
	return keys
}
