package index

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// keywordSearch over NVD's records without reading every summary: a word
// index, made on a snapshot's first keyword query (a server whose clients
// never search pays nothing for it), gives each query the records whose
// summary has a word starting with each word of its terms. That is a
// superset of what NVD's rules match (keywordsMatch: every term starts a
// word, or the phrase does), since each run of word bytes in a term
// starts a word where the term matches, so keywordsMatch still decides
// each candidate, and the answers are those of a scan.

// nvdWords is the word index: the distinct words of the summaries (runs
// of word bytes, ASCII letters in lower case, as keywordsMatch folds
// them), sorted, each with the ascending positions of the records whose
// summary has it.
type nvdWords struct {
	words []string
	offs  []uint32 // post[offs[i]:offs[i+1]] are words[i]'s records
	post  []int32
}

// nvdWordsOnce makes an NVD's word index once.
type nvdWordsOnce struct {
	once sync.Once
	w    *nvdWords
}

// nvdWordIndex returns the word index of ix's NVD records, making it on
// the first call.
func (ix *Index) nvdWordIndex() *nvdWords {
	n := ix.nvd
	n.words.once.Do(func() { n.words.w = buildNVDWords(ix) })
	return n.words.w
}

// buildNVDWords makes the word index: a first pass gives each record its
// distinct word ids (ids in first-seen order), a second lays the
// postings out word by word in sorted order.
func buildNVDWords(ix *Index) *nvdWords {
	n := ix.nvd
	ids := map[string]uint32{}
	var vocab []string
	var count []uint32
	recOff := make([]uint32, len(n.recs)+1)
	var recWords []uint32
	var lower []byte
	for p := range n.recs {
		start := len(recWords)
		text := ix.nvdSummary(n.recs[p].key)
		for i := 0; ; {
			var found bool
			if lower, i, found = nextWord(text, i, lower[:0]); !found {
				break
			}
			id, ok := ids[string(lower)]
			if !ok {
				id = uint32(len(vocab))
				vocab = append(vocab, string(lower))
				ids[vocab[id]] = id
				count = append(count, 0)
			}
			if !slices.Contains(recWords[start:], id) {
				recWords = append(recWords, id)
				count[id]++
			}
		}
		recOff[p+1] = uint32(len(recWords))
	}
	order := make([]uint32, len(vocab)) // word ids in word order
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(vocab[a], vocab[b]) })
	w := &nvdWords{words: make([]string, len(vocab)), offs: make([]uint32, len(vocab)+1), post: make([]int32, len(recWords))}
	next := make([]uint32, len(vocab)) // by word id: where its next record goes
	for rank, id := range order {
		w.words[rank] = vocab[id]
		w.offs[rank+1] = w.offs[rank] + count[id]
		next[id] = w.offs[rank]
	}
	for p := range n.recs {
		for _, id := range recWords[recOff[p]:recOff[p+1]] {
			w.post[next[id]] = int32(p)
			next[id]++
		}
	}
	return w
}

// nvdSummary is the summary keywordsMatch reads for the record of the
// CVE with key key.
func (ix *Index) nvdSummary(key uint64) []byte {
	p, ok := ix.cveByName[key]
	if !ok {
		return nil
	}
	return summaryText(ix.cveBodies[p])
}

// keywordCandidates returns, as a bit set over record positions, the
// records that may match q's keywordSearch (each run of word bytes of
// each term starts a word of the summary); nil when q has no word to
// narrow by (terms of punctuation only).
func (ix *Index) keywordCandidates(q *NVDQuery) []uint64 {
	terms := q.Keywords
	if q.Phrase != "" {
		terms = []string{q.Phrase}
	}
	var set []uint64
	var lower []byte
	for _, t := range terms {
		for i := 0; ; {
			var found bool
			if lower, i, found = nextWord(t, i, lower[:0]); !found {
				break
			}
			set = ix.nvdWordIndex().narrow(set, string(lower), ix.nvd.Len())
		}
	}
	return set
}

// narrow returns the records of set (nil: every record of n) that have
// a word starting with prefix.
func (w *nvdWords) narrow(set []uint64, prefix string, n int) []uint64 {
	lo := sort.SearchStrings(w.words, prefix)
	hi := lo
	for hi < len(w.words) && strings.HasPrefix(w.words[hi], prefix) {
		hi++
	}
	has := make([]uint64, (n+63)/64)
	for _, p := range w.post[w.offs[lo]:w.offs[hi]] {
		has[p>>6] |= 1 << (p & 63)
	}
	if set == nil {
		return has
	}
	for i := range set {
		set[i] &= has[i]
	}
	return set
}

// nextWord appends to lower the next word of s from i (a run of word
// bytes, ASCII letters in lower case) and returns where it ends; false
// when s has no word from i.
func nextWord[T string | []byte](s T, i int, lower []byte) (word []byte, next int, found bool) {
	for i < len(s) && !isWordByte(s[i]) {
		i++
	}
	if i == len(s) {
		return lower, i, false
	}
	for ; i < len(s) && isWordByte(s[i]); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	return lower, i, true
}

// eachSet calls f with each position in set, ascending.
func eachSet(set []uint64, f func(p int32)) {
	for i, word := range set {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			f(int32(i*64 + b))
			word &= word - 1
		}
	}
}
