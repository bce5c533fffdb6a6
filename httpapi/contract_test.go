package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vulnd/vulnd/httpapi/wire"
	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// These tests keep openapi.json and the server in step, in both
// directions: every route is documented and every documented path is a
// route, with POST exactly where the route answers it; every body the
// server sends, every golden body and every example in the document
// validates against the document's schema for its endpoint, status and
// media type; every header the server sends is documented and every
// required one is sent; every documented status, media type and error
// message really comes from the server; a route checks exactly the query
// parameters it documents.

// docURL is the name the schema compiler knows the document by; a schema
// in it is compiled as docURL + "#" + its JSON pointer.
const docURL = "openapi.json"

// apiDoc is openapi.json parsed as the validator parses (numbers as
// json.Number), and a compiler holding it whole as one resource, so that
// "#/components/schemas/X" references resolve inside it.
type apiDoc struct {
	root     map[string]any
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by pointer
}

func loadDoc(t testing.TB) *apiDoc {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPI))
	if err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("openapi.json holds a %T, not an object", v)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, v); err != nil {
		t.Fatal(err)
	}
	return &apiDoc{root: root, compiler: c, schemas: map[string]*jsonschema.Schema{}}
}

// ptr joins JSON pointer tokens into a pointer, each token escaped as
// RFC 6901 asks and then for a URI fragment ("/paths/~1cwe~1%7Bname%7D").
func ptr(tokens ...string) string {
	var b strings.Builder
	for _, tok := range tokens {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
		b.WriteString("/" + url.PathEscape(tok))
	}
	return b.String()
}

// at returns the value at pointer p, as ptr writes pointers.
func (d *apiDoc) at(p string) (any, bool) {
	var v any = d.root
	if p == "" {
		return v, true
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, false
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// object returns the object at p, following $ref (every one here is
// local), and the pointer it ends at.
func (d *apiDoc) object(t testing.TB, p string) (map[string]any, string) {
	t.Helper()
	for range 10 {
		v, ok := d.at(p)
		if !ok {
			t.Fatalf("openapi.json: nothing at #%s", p)
		}
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("openapi.json: #%s holds a %T, not an object", p, v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, p
		}
		if !strings.HasPrefix(ref, "#") {
			t.Fatalf("openapi.json: #%s: $ref %q is not in the document", p, ref)
		}
		p = ref[1:]
	}
	t.Fatalf("openapi.json: $ref chain ending at #%s is too long", p)
	return nil, ""
}

// schema returns the compiled schema at p.
func (d *apiDoc) schema(t testing.TB, p string) *jsonschema.Schema {
	t.Helper()
	if s, ok := d.schemas[p]; ok {
		return s
	}
	s, err := d.compiler.Compile(docURL + "#" + p)
	if err != nil {
		t.Fatalf("compile the schema at #%s: %v", p, err)
	}
	d.schemas[p] = s
	return s
}

// response returns the pointer of the response documented for method
// ("get" or "head") and status on route, $ref followed.
func (d *apiDoc) response(t testing.TB, route, method string, status int) (string, bool) {
	t.Helper()
	p := ptr("paths", docPath(route), method, "responses", strconv.Itoa(status))
	if _, ok := d.at(p); !ok {
		return "", false
	}
	_, p = d.object(t, p)
	return p, true
}

// params returns the parameters of operation method of path docPath,
// the path item's and the operation's, keyed by "in name".
func (d *apiDoc) params(t testing.TB, path, method string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range []string{ptr("paths", path), ptr("paths", path, method)} {
		v, _ := d.at(p + "/parameters")
		list, _ := v.([]any)
		for i := range list {
			prm, _ := d.object(t, p+"/parameters/"+strconv.Itoa(i))
			in, _ := prm["in"].(string)
			name, _ := prm["name"].(string)
			out[in+" "+name] = prm
		}
	}
	return out
}

// walk calls f for every object and array element of the document, with
// its pointer; f returns false to skip what is inside.
func (d *apiDoc) walk(f func(p string, v any) bool) {
	var rec func(p string, v any)
	rec = func(p string, v any) {
		if !f(p, v) {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range docKeys(x) {
				rec(p+ptr(k), x[k])
			}
		case []any:
			for i, e := range x {
				rec(p+"/"+strconv.Itoa(i), e)
			}
		}
	}
	rec("", d.root)
}

// withSchema calls f for every object outside components.schemas that
// holds a schema: media types, parameters and headers.
func (d *apiDoc) withSchema(f func(p string, obj map[string]any)) {
	d.walk(func(p string, v any) bool {
		if p == "/components/schemas" {
			return false
		}
		m, ok := v.(map[string]any)
		if _, has := m["schema"]; ok && has {
			f(p, m)
			return false
		}
		return true
	})
}

// docPath is a route's path as OpenAPI writes it: :name becomes {name}.
func docPath(route string) string {
	segs := strings.Split(route, "/")
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

// routeParams lists the path parameters of a route.
func routeParams(route string) []string {
	var ps []string
	for _, s := range strings.Split(route, "/") {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			ps = append(ps, name)
		}
	}
	return ps
}

// docMethods are the operations a path may have, in this order: GET and
// HEAD on every path, POST only on the paths whose route answers it
// (routes.go's post). The API answers nothing else: any other method gets
// 405, documented once per Allow value under components.responses.
var docMethods = []string{"get", "head", "post"}

// methodsOf lists the operations a path item documents, in docMethods
// order.
func methodsOf(item any) []string {
	m, _ := item.(map[string]any)
	var out []string
	for _, k := range docMethods {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// postPath reports whether the route that OpenAPI writes as path answers
// POST (routes.go's post).
func postPath(path string) bool {
	for _, rt := range routes {
		if docPath(rt.path) == path {
			return rt.post
		}
	}
	return false
}

// answers reports whether route answers method: GET and HEAD everywhere,
// POST where routes.go says so.
func answers(route, method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodPost && postPath(docPath(route))
}

// The media types of bodies: every body is JSON, but a CVE list's 200 can
// be NDJSON (format=ndjson).
const (
	jsonMedia   = "application/json"
	ndjsonMedia = "application/x-ndjson"
)

// bodyValues parses a body of media type mt as the validator parses JSON:
// the one value of a JSON body, or the value of each line of an NDJSON
// body (every line, the last included, ends in "\n"; an empty body has
// none). A schema for NDJSON describes each line.
func bodyValues(mt string, body []byte) ([]any, error) {
	switch mt {
	case jsonMedia:
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	case ndjsonMedia:
		if len(body) > 0 && body[len(body)-1] != '\n' {
			return nil, errors.New("the last line does not end in a newline")
		}
		vals := []any{}
		for i, line := range bytes.SplitAfter(body, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			vals = append(vals, v)
		}
		return vals, nil
	}
	return nil, fmt.Errorf("media type %q is neither %s nor %s", mt, jsonMedia, ndjsonMedia)
}

func docKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestOpenAPIDocument(t *testing.T) {
	d := loadDoc(t)
	if v, _ := d.root["openapi"].(string); !regexp.MustCompile(`^3\.1\.[0-9]+$`).MatchString(v) {
		t.Errorf("openapi is %q, want 3.1.x", v)
	}
	if v := d.root["jsonSchemaDialect"]; v != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect is %v, want JSON Schema 2020-12", v)
	}
	paths, _ := d.root["paths"].(map[string]any)
	ids := map[string]string{}
	for _, path := range docKeys(paths) {
		item, _ := paths[path].(map[string]any)
		// GET and HEAD on every path, POST exactly where the route
		// answers it: a path documents POST if and only if routes.go says
		// post (a path that is no route is TestOpenAPIPathsMatchRoutes's).
		want := []string{"get", "head"}
		if postPath(path) {
			want = append(want, "post")
		}
		for k := range item {
			if !slices.Contains(append([]string{"summary", "description", "parameters"}, want...), k) {
				t.Errorf("%s: %q: the path answers only %s (any other method is 405, see the MethodNotAllowed responses under components.responses)", path, k, strings.ToUpper(strings.Join(want, ", ")))
			}
		}
		statuses := map[string][]string{}
		for _, m := range want {
			op, ok := item[m].(map[string]any)
			if !ok {
				t.Errorf("%s: no %s operation: every path answers GET and HEAD, and POST where its route says post", path, m)
				continue
			}
			id, _ := op["operationId"].(string)
			if other, dup := ids[id]; dup {
				t.Errorf("%s %s: operationId %q, also %s's", m, path, id, other)
			}
			ids[id] = m + " " + path
			// getX, headX and postX: one name for the endpoint, the
			// method before it.
			getID, _ := d.at(ptr("paths", path, "get", "operationId"))
			if g, _ := getID.(string); len(id) <= len(m) || !strings.HasPrefix(id, m) || id[len(m):] != strings.TrimPrefix(g, "get") {
				t.Errorf("%s %s: operationId %q: want getX for GET, headX for HEAD and postX for POST (GET's is %q)", m, path, id, g)
			}
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s: no summary", m, path)
			}
			// Only a POST has a request body, and it is JSON with
			// examples.
			_, hasReq := op["requestBody"]
			if hasReq != (m == "post") {
				t.Errorf("%s %s: requestBody is %v: a POST has one, GET and HEAD none", m, path, hasReq)
			}
			if hasReq {
				rb, rbp := d.object(t, ptr("paths", path, m, "requestBody"))
				content, _ := rb["content"].(map[string]any)
				if rb["required"] != true || len(content) != 1 || content[jsonMedia] == nil {
					t.Errorf("%s %s: the request body (#%s) must be required and JSON only", m, path, rbp)
				}
				ex, _ := d.at(rbp + ptr("content", jsonMedia, "examples"))
				if exs, _ := ex.(map[string]any); len(exs) == 0 {
					t.Errorf("%s %s: no request body examples", m, path)
				}
			}
			res, _ := op["responses"].(map[string]any)
			statuses[m] = docKeys(res)
			for _, status := range docKeys(res) {
				r, rp := d.object(t, ptr("paths", path, m, "responses", status))
				content, hasBody := r["content"].(map[string]any)
				switch {
				case m == "head" && hasBody:
					t.Errorf("head %s %s: a HEAD response has no body, so no content (#%s)", path, status, rp)
				case m != "head" && (status == "304") == hasBody:
					t.Errorf("%s %s %s: content is %v (#%s): every GET and POST response but 304 has a body", m, path, status, hasBody, rp)
				case m == "post" && status == "304":
					t.Errorf("post %s: 304: a POST never gets 304", path)
				}
				// Every body can be JSON; only a 200 can also be NDJSON.
				if hasBody && content[jsonMedia] == nil {
					t.Errorf("%s %s %s: no %s content (#%s)", m, path, status, jsonMedia, rp)
				}
				for _, mt := range docKeys(content) {
					if mt != jsonMedia && (mt != ndjsonMedia || status != "200") {
						t.Errorf("%s %s %s: media type %s (#%s): bodies are %s, and only a 200 may be %s", m, path, status, mt, rp, jsonMedia, ndjsonMedia)
					}
					if status == "200" {
						ex, _ := d.at(rp + ptr("content", mt, "examples"))
						if exs, _ := ex.(map[string]any); len(exs) == 0 {
							t.Errorf("%s %s 200: no %s examples", m, path, mt)
						}
					}
				}
			}
		}
		if !slices.Equal(statuses["get"], statuses["head"]) {
			t.Errorf("%s: GET documents statuses %v, HEAD %v: HEAD answers as GET does", path, statuses["get"], statuses["head"])
		}
	}

	// The 405 of each path is the response whose Allow lists the path's
	// methods, and each 405 response serves some path.
	used := map[string]bool{}
	for _, path := range docKeys(paths) {
		if rp, ok := d.methodNotAllowed(t, path); ok {
			used[rp] = true
		}
	}
	resps, _ := d.at("/components/responses")
	for _, name := range docKeys(resps.(map[string]any)) {
		rp := ptr("components", "responses", name)
		if _, ok := d.at(rp + ptr("headers", "Allow")); ok && !used[rp] {
			t.Errorf("#%s: no path answers the methods its Allow lists", rp)
		}
	}

	d.walk(func(p string, v any) bool {
		if m, ok := v.(map[string]any); ok {
			if ref, ok := m["$ref"].(string); ok {
				if _, found := d.at(strings.TrimPrefix(ref, "#")); !strings.HasPrefix(ref, "#/") || !found {
					t.Errorf("#%s: $ref %q leads nowhere", p, ref)
				}
			}
		}
		return true
	})

	// Every schema is a JSON Schema 2020-12 schema and compiles.
	meta, err := d.compiler.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	var schemas []string
	comp, _ := d.at("/components/schemas")
	for _, k := range docKeys(comp.(map[string]any)) {
		schemas = append(schemas, ptr("components", "schemas", k))
	}
	d.withSchema(func(p string, _ map[string]any) { schemas = append(schemas, p+"/schema") })
	for _, p := range schemas {
		v, _ := d.at(p)
		if err := meta.Validate(v); err != nil {
			t.Errorf("#%s is not a JSON Schema 2020-12 schema: %v", p, err)
		}
		d.schema(t, p)
	}
	if len(schemas) < 40 {
		t.Errorf("checked %d schemas, want at least 40", len(schemas))
	}
}

func TestOpenAPIPathsMatchRoutes(t *testing.T) {
	d := loadDoc(t)
	paths, _ := d.root["paths"].(map[string]any)
	undocumented := map[string]bool{}
	for p := range paths {
		undocumented[p] = true
	}
	for _, rt := range routes {
		path := docPath(rt.path)
		if !undocumented[path] {
			t.Errorf("route %s (routes.go) is not in openapi.json: document it under paths as %q", rt.path, path)
			continue
		}
		delete(undocumented, path)
		for _, m := range methodsOf(paths[path]) { // which ones: TestOpenAPIDocument's
			declared := map[string]bool{}
			for key, prm := range d.params(t, path, m) {
				if name, ok := strings.CutPrefix(key, "path "); ok {
					declared[name] = true
					if prm["required"] != true {
						t.Errorf("%s %s: path parameter %q lacks required: true", m, path, name)
					}
				}
			}
			for _, name := range routeParams(rt.path) {
				if !declared[name] {
					t.Errorf("%s %s: parameter %q of route %s is not declared in openapi.json", m, path, name, rt.path)
				}
				delete(declared, name)
			}
			for _, name := range docKeys(declared) {
				t.Errorf("%s %s: openapi.json declares path parameter %q, which route %s lacks", m, path, name, rt.path)
			}
		}
	}
	for _, p := range docKeys(undocumented) {
		t.Errorf("openapi.json documents %s, which is no route in routes.go", p)
	}
}

func TestOpenAPIExamples(t *testing.T) {
	d := loadDoc(t)
	n := 0
	d.withSchema(func(p string, obj map[string]any) {
		if _, ok := obj["example"]; ok {
			t.Errorf("#%s: write examples, not example", p)
		}
		exs, _ := obj["examples"].(map[string]any)
		for _, name := range docKeys(exs) {
			ex, ep := d.object(t, p+ptr("examples", name))
			v, ok := ex["value"]
			if !ok {
				t.Errorf("#%s: an example without a value", ep)
				continue
			}
			// An NDJSON example is the body as text; the schema is each
			// line's.
			vals := []any{v}
			if strings.HasSuffix(p, ptr("content", ndjsonMedia)) {
				text, ok := v.(string)
				if !ok {
					t.Errorf("#%s: an %s example's value is the body as a string, not a %T", ep, ndjsonMedia, v)
					continue
				}
				var err error
				if vals, err = bodyValues(ndjsonMedia, []byte(text)); err != nil {
					t.Errorf("#%s: %v", ep, err)
					continue
				}
			}
			for _, v := range vals {
				if err := d.schema(t, p+"/schema").Validate(v); err != nil {
					t.Errorf("example #%s does not validate against #%s/schema: %v", ep, p, err)
				}
			}
			n++
		}
	})
	comp, _ := d.at("/components/schemas")
	for _, k := range docKeys(comp.(map[string]any)) {
		p := ptr("components", "schemas", k)
		v, _ := d.at(p + "/examples")
		exs, _ := v.([]any)
		for i, ex := range exs {
			if err := d.schema(t, p).Validate(ex); err != nil {
				t.Errorf("example %d of #%s does not validate: %v", i, p, err)
			}
			n++
		}
	}
	if n < 60 {
		t.Errorf("validated %d examples, want at least 60", n)
	}
}

// methodNotAllowed returns the pointer of the 405 response of path: the
// one under components.responses whose Allow header is the path's methods,
// as the server writes them ("GET, HEAD").
func (d *apiDoc) methodNotAllowed(t testing.TB, path string) (string, bool) {
	t.Helper()
	item, _ := d.at(ptr("paths", path))
	allow := strings.ToUpper(strings.Join(methodsOf(item), ", "))
	comp, _ := d.at("/components/responses")
	for _, name := range docKeys(comp.(map[string]any)) {
		rp := ptr("components", "responses", name)
		if _, ok := d.at(rp + ptr("headers", "Allow")); !ok {
			continue
		}
		h, _ := d.object(t, rp+ptr("headers", "Allow"))
		if s, _ := h["schema"].(map[string]any); s["const"] == allow {
			return rp, true
		}
	}
	t.Errorf("%s: no response under components.responses has an Allow header of const %q: document the 405 of this path", path, allow)
	return "", false
}

// matchRoute returns the route a request-target reaches, as the router
// picks it (static segments before parameters), or "" for none.
func matchRoute(target string) string {
	path, _, _ := strings.Cut(target, "?")
	segs := strings.Split(path, "/")
	best, bestStatic := "", -1
	for _, rt := range routes {
		rs := strings.Split(rt.path, "/")
		if len(rs) != len(segs) {
			continue
		}
		static, ok := 0, true
		for i, s := range rs {
			switch {
			case strings.HasPrefix(s, ":"):
				ok = ok && segs[i] != ""
			case s == segs[i]:
				static++
			default:
				ok = false
			}
		}
		if ok && static > bestStatic {
			best, bestStatic = rt.path, static
		}
	}
	return best
}

// readJSON reads file (or its member key, if not "") as the validator
// parses JSON.
func readJSON(t testing.TB, file, key string) any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if key == "" {
		return v
	}
	m, _ := v.(map[string]any)
	mv, ok := m[key]
	if !ok {
		t.Fatalf("%s has no member %q", file, key)
	}
	return mv
}

// fillIDs sets every number 0 named id or cpe_id to 1. Goldens write
// internal ids as 0; a real id is at least 1.
func fillIDs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok && n == "0" && (k == "id" || k == "cpe_id") {
				x[k] = json.Number("1")
				continue
			}
			fillIDs(e)
		}
	case []any:
		for _, e := range x {
			fillIDs(e)
		}
	}
}

func TestOpenAPIGoldens(t *testing.T) {
	d := loadDoc(t)
	check := func(name, target string, status int, body any) {
		t.Helper()
		route := matchRoute(target)
		if route == "" {
			t.Errorf("%s: %s reaches no route", name, target)
			return
		}
		rp, ok := d.response(t, route, "get", status)
		if !ok {
			t.Errorf("%s: GET %s: status %d is not documented for %s", name, target, status, docPath(route))
			return
		}
		fillIDs(body)
		if err := d.schema(t, rp+ptr("content", "application/json", "schema")).Validate(body); err != nil {
			t.Errorf("%s: GET %s: the %d body does not validate against #%s: %v", name, target, status, rp, err)
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d golden files, want at least 40", len(files))
	}
	for _, f := range files {
		g, _ := readJSON(t, f, "").(map[string]any)
		path, _ := g["path"].(string)
		status, _ := g["status"].(json.Number).Int64()
		check(f, path, int(status), g["body"])
	}
	// The change-tracking goldens: a report, and the events of its alerts.
	const report = "/reports/20261122T060000Z"
	dir := filepath.Join("testdata", "changes")
	check(dir+"/report.json", report, 200, readJSON(t, filepath.Join(dir, "report.json"), "report"))
	events, _ := filepath.Glob(filepath.Join(dir, "CVE-*.json"))
	if len(events) < 6 {
		t.Fatalf("%d change goldens, want at least 6", len(events))
	}
	for _, f := range events {
		check(f, report+"/alerts/1", 200, readJSON(t, f, "events"))
	}
}

func TestOpenAPIServed(t *testing.T) {
	srv := newTestServer(t, handData(t))
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		res, body := do(t, srv, m, "/openapi.json", nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s /openapi.json: %d, Content-Type %q; want 200 application/json", m, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if m == http.MethodGet && !bytes.Equal(body, openAPI) {
			t.Errorf("GET /openapi.json: %d bytes, not the %d embedded ones", len(body), len(openAPI))
		}
		if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(openAPI)) {
			t.Errorf("%s /openapi.json: Content-Length %q, want %d", m, cl, len(openAPI))
		}
	}
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, openAPI) {
		t.Error("the embedded document is not openapi.json")
	}
}

// liveServer serves h as vulnd serves, through NewListener on a loopback
// port, so that targets net/http would refuse (a bad escape, a raw space)
// reach the server's own checks. It returns the address.
func liveServer(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(wire.NewListener(l))
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// rawRequest sends one request with the target exactly as written, on a
// connection of its own, and reads the whole response. A POST, or a
// request with a body, sends the body as JSON with its Content-Length.
func rawRequest(t testing.TB, addr, method, target string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: vulnd\r\nAccept: application/json\r\nConnection: close\r\n")
	for _, k := range docKeys(hdr) {
		b.WriteString(k + ": " + hdr[k] + "\r\n")
	}
	if method == http.MethodPost || body != "" {
		b.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n" + body)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, target, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, target, err)
	}
	return res, out
}

// liveRun checks live responses against the document and notes what it
// saw: each (method, path, status), each header, each media type and each
// error message, by response.
type liveRun struct {
	d        *apiDoc
	statuses map[string]bool
	headers  map[string]bool
	media    map[string]bool            // response pointer + " " + media type
	messages map[string]map[string]bool // response pointer -> message
}

// These headers are net/http's or the connection's, not the API's.
var transportHeaders = []string{"Date", "Connection"}

// check sends method target (with hdr) to addr, wants status (if not 0),
// and checks the response against what the document says of it: status,
// media type, body schema, error message, headers.
func (lr *liveRun) check(t *testing.T, addr, method, target string, hdr map[string]string, status int) {
	t.Helper()
	lr.send(t, addr, method, target, hdr, "", status)
}

// send is check with a request body.
func (lr *liveRun) send(t *testing.T, addr, method, target string, hdr map[string]string, reqBody string, status int) {
	t.Helper()
	res, body := rawRequest(t, addr, method, target, hdr, reqBody)
	what := method + " " + target
	if reqBody != "" {
		what += " " + reqBody
	}
	if len(what) > 100 {
		what = what[:100] + "..."
	}
	if status != 0 && res.StatusCode != status {
		t.Errorf("%s: status %d, want %d; body %.300s", what, res.StatusCode, status, body)
		return
	}
	d := lr.d
	// rp is the response documented for this answer; media the one whose
	// content lists the media types it may have: for HEAD, GET's.
	var rp, media string
	switch route := matchRoute(target); {
	case strings.HasPrefix(target, "/.panic/"):
		rp = "/components/responses/InternalError"
	case route == "":
		rp = "/components/responses/EndpointNotFound"
	case !answers(route, method):
		var ok bool
		if rp, ok = d.methodNotAllowed(t, docPath(route)); !ok {
			return
		}
	default:
		m := strings.ToLower(method)
		var ok bool
		if rp, ok = d.response(t, route, m, res.StatusCode); !ok {
			t.Errorf("%s: status %d is not documented for %s %s; body %.300s", what, res.StatusCode, m, docPath(route), body)
			return
		}
		lr.statuses[m+" "+docPath(route)+" "+strconv.Itoa(res.StatusCode)] = true
		if m == "head" {
			media, _ = d.response(t, route, "get", res.StatusCode)
		}
	}
	resp, _ := d.object(t, rp)

	ct := res.Header.Get("Content-Type")
	if media == "" {
		media = rp
		if res.StatusCode != http.StatusNotModified {
			lr.media[rp+" "+ct] = true
		}
	}
	mediaObj, _ := d.object(t, media)
	types, _ := mediaObj["content"].(map[string]any)
	if _, ok := types[ct]; res.StatusCode != http.StatusNotModified && !ok {
		t.Errorf("%s: Content-Type %q, not one of %v (#%s)", what, ct, docKeys(types), media)
	}
	_, hasBody := resp["content"]
	switch {
	case method == http.MethodHead || !hasBody:
		if len(body) != 0 {
			t.Errorf("%s: %d body bytes, want none (#%s)", what, len(body), rp)
		}
	case types[ct] != nil:
		vals, err := bodyValues(ct, decode(t, res, body))
		if err != nil {
			t.Errorf("%s: body is not %s: %v: %.200s", what, ct, err, body)
			break
		}
		for _, v := range vals {
			if err := d.schema(t, rp+ptr("content", ct, "schema")).Validate(v); err != nil {
				t.Errorf("%s: the %d body does not validate against #%s: %v", what, res.StatusCode, rp, err)
			}
		}
		if res.StatusCode >= 400 {
			msg, _ := vals[0].(map[string]any)["message"].(string)
			if !slices.Contains(exampleMessages(t, d, rp), msg) {
				t.Errorf("%s: message %q is not among the examples of #%s: document it", what, msg, rp)
			}
			if lr.messages[rp] == nil {
				lr.messages[rp] = map[string]bool{}
			}
			lr.messages[rp][msg] = true
		}
	}

	documented := map[string]bool{}
	hdrs, _ := resp["headers"].(map[string]any)
	for _, name := range docKeys(hdrs) {
		canon := http.CanonicalHeaderKey(name)
		documented[canon] = true
		h, hp := d.object(t, rp+ptr("headers", name))
		vals, sent := res.Header[canon]
		lr.headers[canon] = lr.headers[canon] || sent
		if !sent {
			if h["required"] == true {
				t.Errorf("%s: no %s header, which #%s requires", what, name, hp)
			}
			continue
		}
		var v any = vals[0]
		if s, _ := h["schema"].(map[string]any); s["type"] == "integer" {
			if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
				t.Errorf("%s: %s %q is not an integer", what, name, vals[0])
				continue
			}
			v = json.Number(vals[0])
		}
		if len(vals) != 1 {
			t.Errorf("%s: %d %s headers, want one", what, len(vals), name)
		}
		if err := d.schema(t, hp+"/schema").Validate(v); err != nil {
			t.Errorf("%s: %s %q does not validate against #%s/schema: %v", what, name, vals[0], hp, err)
		}
	}
	for name := range res.Header {
		if !documented[name] && name != "Content-Type" && !slices.Contains(transportHeaders, name) {
			t.Errorf("%s: header %s: %q is not documented in #%s/headers", what, name, res.Header.Get(name), rp)
		}
	}
}

// exampleMessages lists the messages of the examples of the error
// response at rp.
func exampleMessages(t testing.TB, d *apiDoc, rp string) []string {
	t.Helper()
	v, _ := d.at(rp + ptr("content", "application/json", "examples"))
	exs, _ := v.(map[string]any)
	var out []string
	for _, name := range docKeys(exs) {
		ex, _ := d.object(t, rp+ptr("content", "application/json", "examples", name))
		if m, ok := ex["value"].(map[string]any)["message"].(string); ok {
			out = append(out, m)
		}
	}
	return out
}

// liveTargets is a target answering 200 on handData for every route,
// without a query unless the route needs one: the live test derives its
// other requests from these.
var liveTargets = map[string]string{
	"/cwe":                                   "/cwe",
	"/cwe/:name":                             "/cwe/cwe-79",
	"/cwe/:name/cve":                         "/cwe/CWE-79/cve",
	"/cve":                                   "/cve",
	"/cve/:name":                             "/cve/CVE-2023-0001",
	"/cve/:name/details":                     "/cve/cve-2023-0001/details",
	"/vendors":                               "/vendors",
	"/vendors/:vendor":                       "/vendors/a%2Fb",
	"/vendors/:vendor/cve":                   "/vendors/acme/cve",
	"/vendors/:vendor/products":              "/vendors/a%2Fb/products",
	"/vendors/:vendor/products/:product":     "/vendors/a%2Fb/products/x%20y%2Bz%25",
	"/vendors/:vendor/products/:product/cve": "/vendors/acme/products/widget/cve",
	"/reports":                               "/reports",
	"/reports/:report":                       "/reports/20261122T000000Z",
	"/reports/:report/alerts":                "/reports/20261121T000000Z/alerts",
	"/reports/:report/alerts/:alert":         "/reports/20261122T000000Z/alerts/1",
	"/openapi.json":                          "/openapi.json",
	"/cve/batch":                             "/cve/batch?names=CVE-2023-0001,cve-2024-1001,CVE-2099-0001",
	"/status":                                "/status",

	"/vendors/:vendor/products/:product/explain": "/vendors/acme/products/widget/explain?version=1.5",
	NVDPath:        NVDPath,
	NVDHistoryPath: NVDHistoryPath,
}

// liveBatch is a POST body answering 200 on handData (and on the sample,
// with one name missing).
const liveBatch = `{"names":["CVE-2023-0001","cve-2024-1001","CVE-2099-0001","cve-2023-0001"]}`

// addQuery adds the parameter q to target, after its own, or, with first,
// before them: of a repeated parameter, the first counts.
func addQuery(target, q string, first bool) string {
	path, query, ok := strings.Cut(target, "?")
	switch {
	case !ok:
		return path + "?" + q
	case first:
		return path + "?" + q + "&" + query
	}
	return target + "&" + q
}

// batchNames is a POST body of /cve/batch listing names.
func batchNames(names ...string) string {
	b, _ := json.Marshal(map[string][]string{"names": names})
	return string(b)
}

// changesIndex builds the change-tracking fixture of TestChangeGoldens:
// the sample, then the sample plus changes/after with -previous.
func changesIndex(t *testing.T) *index.Index {
	t.Helper()
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	dir := t.TempDir()
	s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	if _, err := loader.Build(loader.BuildOptions{CWECatalog: cwe, Out: s1, Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC),
		Feeds: []string{sample, sharedData(t, "nvd/changes/before.json.gz")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := loader.Build(loader.BuildOptions{CWECatalog: cwe, Out: s2, Previous: s1, Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Feeds: []string{sample, sharedData(t, "nvd/changes/after.json.gz")}}); err != nil {
		t.Fatal(err)
	}
	ix, _, err := loader.Load(s2)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestOpenAPILiveResponses(t *testing.T) {
	d := loadDoc(t)
	lr := &liveRun{d: d, statuses: map[string]bool{}, headers: map[string]bool{}, media: map[string]bool{}, messages: map[string]map[string]bool{}}
	hand := handData(t)
	hd := liveServer(t, New(func() *index.Index { return hand }, Options{}))
	cached := liveServer(t, New(func() *index.Index { return hand }, Options{CacheControl: "public, max-age=300"}))
	none := liveServer(t, New(func() *index.Index { return nil }, Options{}))
	panicky, _ := panicServer(t)
	pn := liveServer(t, panicky)
	both := func(addr, target string, hdr map[string]string, status int) {
		t.Helper()
		lr.check(t, addr, http.MethodGet, target, hdr, status)
		lr.check(t, addr, http.MethodHead, target, hdr, status)
	}
	post := func(addr, target, body string, hdr map[string]string, status int) {
		t.Helper()
		lr.send(t, addr, http.MethodPost, target, hdr, body, status)
	}
	gzip := map[string]string{"Accept-Encoding": "gzip"}
	zstd := map[string]string{"Accept-Encoding": "zstd"}
	anyTag := map[string]string{"If-None-Match": "*"}
	future := map[string]string{"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}

	// From each route's 200 target: the answers every route can give.
	for _, rt := range routes {
		base, ok := liveTargets[rt.path]
		if !ok {
			t.Errorf("route %s has no live target: add one to liveTargets in contract_test.go", rt.path)
			continue
		}
		params := d.params(t, docPath(rt.path), "get")
		both(hd, base, nil, 200)
		both(hd, base, gzip, 200)
		both(hd, base, zstd, 200)
		both(cached, base, nil, 200)
		both(hd, base, anyTag, 304)
		both(cached, base, future, 304)
		both(hd, addQuery(base, "x="+strings.Repeat("q", maxQuery), false), nil, 414)
		both(hd, addQuery(base, "x=a b", false), nil, 400) // a raw space
		both(none, base, nil, 503)
		// Any other method is 405, its Allow the path's methods.
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions} {
			if !answers(rt.path, m) {
				lr.check(t, hd, m, base, nil, 405)
			}
		}
		if rt.post {
			path, _, _ := strings.Cut(base, "?")
			post(hd, path, liveBatch, nil, 200)
			post(hd, path, liveBatch, anyTag, 200) // a POST never gets 304
			post(cached, path, liveBatch, future, 200)
			post(hd, path+"?x="+strings.Repeat("q", maxQuery), liveBatch, nil, 414)
			post(hd, path+"?x=a b", liveBatch, nil, 400)
			post(none, path, liveBatch, nil, 503)
		}
		// A route checks a query parameter exactly when it documents it:
		// a bad value is 400 there and ignored elsewhere. The bad one goes
		// first, as the first of a repeated parameter counts.
		for _, q := range []string{"page=0", "page=%ZZ", "cvss=bogus", "updated_since=yesterday", "published_since=2024-01-31",
			"kev=yes", "format=xml", "version=", "q=%ZZ", "cwe=%ZZ", "vendor=%ZZ", "product=%ZZ", "names=,",
			"cvss=%ZZ", "updated_since=%ZZ", "published_since=%ZZ", "kev=%ZZ", "format=%ZZ", "version=%ZZ", "names=%ZZ",
			"epss_min=10%25", "percentile_min=1.5", "sort=cvss", "epss_min=%ZZ", "percentile_min=%ZZ", "sort=%ZZ"} {
			name, _, _ := strings.Cut(q, "=")
			want := 200
			if params["query "+name] != nil {
				want = 400
			}
			both(hd, addQuery(base, q, true), nil, want)
		}
		// A name that is not valid percent-encoding, and one too long.
		rs, segs := strings.Split(rt.path, "/"), strings.Split(base, "/")
		for i, s := range rs {
			if strings.HasPrefix(s, ":") {
				for name, status := range map[string]int{"%ZZ": 400, strings.Repeat("A", maxPath): 414} {
					bad := slices.Clone(segs)
					bad[i] = name
					both(hd, strings.Join(bad, "/"), nil, status)
				}
				break
			}
		}
	}

	// Names and ids that are not there, and requests that reach no route.
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/cwe/CWE-1321", 404}, // cited, not in the catalog
		{"/cwe/79", 404},
		{"/cwe/CWE-1321/cve", 404},
		{"/cwe/CWE-79/cve?page=x", 400},
		{"/cve?cvss=LOW&page=2", 200},
		{"/cve?cvss=%ZZ", 400},
		{"/cve/CVE-2099-0001", 404},
		{"/cve/CVE-2099-0001/details", 404},
		{"/cve?kev=TRUE&cvss=high", 200},
		{"/vendors/nobody", 404},
		{"/vendors/nobody/cve", 404},
		{"/vendors/acme/cve?page=3", 200},
		{"/vendors/nobody/products", 404},
		{"/vendors/nobody/products/widget", 404},
		{"/vendors/a%2Fb/products/nothing", 404},
		{"/vendors/acme/products/nothing/cve", 404},
		{"/vendors/nobody/products/widget/cve", 404},
		{"/reports?page=2", 200},
		{"/reports/nope", 404},
		{"/reports/nope/alerts", 404},
		{"/reports/nope/alerts/1", 404},
		{"/reports/20261122T000000Z/alerts/2", 200},
		{"/reports/20261122T000000Z/alerts/3", 404}, // another report's
		{"/reports/20261122T000000Z/alerts/x", 404},
		{"/nope", 404},
		{"/cve/", 404},
		{"/CVE", 404},
		{"/cve/batch/x", 404},
	} {
		both(hd, tc.target, nil, tc.status)
	}
	lr.check(t, hd, http.MethodPost, "/nope", nil, 404)
	both(pn, "/.panic/x", nil, 500)

	// The filters of the CVE lists, their export, versions, search,
	// batch lookup: every answer each can give.
	widget := "/vendors/acme/products/widget/cve"
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/cve?updated_since=2024-02-01+00:00:00Z", 200},
		{"/cve?updated_since=2024-02-01%2000:00:00.5Z&page=3", 200},
		{"/cve?published_since=2023-01-01T01:00:00%2B01:00", 200},
		{"/cve?published_since=2024-01-01T00:00:00Z&updated_since=2024-01-31T23:59:59.999Z&cvss=high", 200},
		{"/cve?cwe=cwe-79&vendor=a%2Fb&product=x%20y%2Bz%25&cvss=high", 200},
		{"/cve?vendor=acme&updated_since=2024-01-01T00:00:00Z&page=2", 200},
		{"/cve?vendor=nobody", 200},
		{"/cve?vendor=acme&product=nothing", 200},
		{"/cve?cwe=CWE-1321", 200}, // cited, not in the catalog: nothing
		{"/cve?updated_since=2024-02-30T00:00:00Z", 400},
		{"/cve?updated_since=2024-02-01T00:00:00+01:00", 400}, // a raw + is a space
		{"/cve?published_since=", 400},
		{"/cve?product=widget", 400},
		{"/cve?product=widget&vendor=%ZZ", 400},
		{"/cve?vendor=acme&product=widget&version=1.5", 200},
		{"/cve?vendor=acme&product=widget&version=1.5&format=ndjson&cvss=high", 200},
		{"/cve?vendor=acme&version=1.5", 400},
		{"/cve?version=1.5", 400},
		{"/cve?vendor=acme&product=widget&version=", 400},
		{"/cve?vendor=acme&product=widget&version=%ZZ", 400},
		{"/cwe/CWE-79/cve?version=1.5", 400},
		{"/cwe/CWE-1321/cve?version=1.5", 400}, // before the name
		{"/vendors/acme/cve?version=1.5", 400},
		{"/vendors/nobody/cve?version=", 400},
		{"/cve?format=ndjson", 200},
		{"/cve?format=ndjson&cvss=medium&vendor=acme&updated_since=2024-01-01T00:00:00Z&page=3", 200},
		{"/cve?format=ndjson&vendor=nobody", 200},
		{"/cve?format=json&page=2", 200},
		{"/cve?format=NDJSON", 400},
		{"/cve?format=ndjson&page=0", 400},
		{"/cwe/CWE-79/cve?format=ndjson", 200},
		{"/cwe/CWE-79/cve?updated_since=2030-01-01T00:00:00Z", 200},
		{"/cwe/CWE-79/cve?published_since=bad", 400},
		{"/cwe/CWE-79/cve?updated_since=bad", 400},
		{"/cwe/CWE-79/cve?format=csv", 400},
		{"/cwe/CWE-1321/cve?updated_since=bad", 404},
		{"/vendors/acme/cve?format=ndjson&published_since=2024-01-01T00:00:00Z", 200},
		{"/vendors/acme/cve?updated_since=x", 400},
		{"/vendors/acme/cve?published_since=x", 400},
		{"/vendors/acme/cve?format=", 400},
		{"/vendors/nobody/cve?format=xml", 404},
		{widget + "?version=1.5", 200},
		{widget + "?version=1.5&format=ndjson", 200},
		{widget + "?version=9.9", 200},
		{widget + "?version=*", 200},
		{widget + "?version=", 400},
		{widget + "?version=" + strings.Repeat("1", 257), 400},
		{widget + "?version=%ZZ", 400},
		{widget + "?updated_since=x", 400},
		{widget + "?published_since=x", 400},
		{widget + "?format=xml", 400},
		{widget + "?version=&page=0", 400},
		{"/vendors/nobody/products/widget/cve?version=1.0", 404},
		{"/vendors/acme/products/nothing/cve?version=1.0", 404},
		{"/vendors/a%2Fb/products/x%20y%2Bz%25/cve?version=10.0&page=1", 200},
		{"/vendors?q=ACM", 200},
		{"/vendors?q=a&page=2", 200},
		{"/vendors?q=%ZZ", 400},
		{"/vendors/acme/products?q=WID", 200},
		{"/vendors/acme/products?q=nothing", 200},
		{"/vendors/a%2Fb/products?q=%ZZ", 400},
		{"/vendors/nobody/products?q=w", 404},
		{"/cve/batch?names=+CVE-2023-0001+,,cve-2023-0001,nope", 200},
		{"/cve/batch?names=nope", 200},
		{"/cve/batch", 400},
		{"/cve/batch?names=", 400},
		{"/cve/batch?names=%ZZ", 400},
		{"/cve/batch?names=" + strings.Repeat("a,", 1001), 400},
		{"/status?x=1", 200},
		// Explained matches: version is required, then the names.
		{"/vendors/acme/products/widget/explain", 400},
		{"/vendors/acme/products/widget/explain?page=2&version=1.5", 200},
		{"/vendors/acme/products/widget/explain?version=" + strings.Repeat("1", 257), 400},
		{"/vendors/nobody/products/widget/explain", 400},
		{"/vendors/nobody/products/widget/explain?version=1.5", 404},
		{"/vendors/acme/products/nothing/explain?version=1.5", 404},
	} {
		both(hd, tc.target, nil, tc.status)
	}
	both(hd, "/cve?format=ndjson", anyTag, 304)
	both(cached, "/vendors/acme/cve?format=ndjson", future, 304)
	both(cached, widget+"?format=ndjson&version=1.1", nil, 200)
	// An export is never compressed.
	for _, hdr := range []map[string]string{gzip, zstd} {
		both(hd, "/cve?format=ndjson", hdr, 200)
		if res, body := rawRequest(t, hd, http.MethodGet, "/cve?format=ndjson", hdr, ""); res.Header.Get("Content-Encoding") != "" || len(body) < minCompress {
			t.Errorf("GET /cve?format=ndjson with %v: Content-Encoding %q, %d bytes: want a whole, uncompressed export", hdr, res.Header.Get("Content-Encoding"), len(body))
		}
	}

	// POST /cve/batch: a body the document's request schema accepts gets
	// 200, one it refuses 400, and the other way round.
	many := make([]string, 1001)
	for i := range many {
		many[i] = "CVE-2024-1001"
	}
	reqSchema := d.schema(t, ptr("paths", "/cve/batch", "post", "requestBody", "content", jsonMedia, "schema"))
	for _, tc := range []struct {
		body   string
		hdr    map[string]string
		status int
	}{
		{liveBatch, nil, 200},
		{batchNames("CVE-2024-1001", "CVE-2024-1002", "CVE-2024-1003", "CVE-2024-1004", "CVE-2024-1005"), gzip, 200},
		{batchNames("CVE-2024-1001", "CVE-2024-1002", "CVE-2024-1003", "CVE-2024-1004", "CVE-2024-1005"), zstd, 200},
		{batchNames(many[:1000]...), nil, 200},
		{batchNames(""), nil, 200},
		{`{"names":["nope"],"other":1}`, nil, 200},
		{`{"names":[]}`, nil, 400},
		{batchNames(many...), nil, 400},
		{`{}`, nil, 400},
		{`{"names":null}`, nil, 400},
		{`{"names":"CVE-2023-0001"}`, nil, 400},
		{`{"names":[1]}`, nil, 400},
		{`["CVE-2023-0001"]`, nil, 400},
		{`{"names":["CVE-2023-0001"]} {}`, nil, 400},
		{`not json`, nil, 400},
		{``, nil, 400},
	} {
		post(hd, "/cve/batch", tc.body, tc.hdr, tc.status)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.body))
		if valid := err == nil && reqSchema.Validate(v) == nil; valid != (tc.status == 200) {
			t.Errorf("POST /cve/batch %.80s: status %d, but the request schema says valid %v", tc.body, tc.status, valid)
		}
	}
	post(hd, "/cve/batch", `{"names":["`+strings.Repeat("x", maxBatchBody)+`"]}`, nil, 413)
	post(hd, "/cve/batch?names=%ZZ", liveBatch, nil, 200) // the query is not read

	// The real sample, at every golden path and a few more, and the
	// change-tracking fixture at every report, alert and event list.
	six := sampleIndex(t)
	sample := liveServer(t, New(func() *index.Index { return six }, Options{}))
	c5 := sampleCVE5Index(t)
	withCVE5 := liveServer(t, New(func() *index.Index { return c5 }, Options{}))
	ep := sampleEPSSIndex(t)
	withEPSS := liveServer(t, New(func() *index.Index { return ep }, Options{}))
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, f := range files {
		g, _ := readJSON(t, f, "").(map[string]any)
		status, _ := g["status"].(json.Number).Int64()
		srv := sample
		switch g["fixture"] {
		case "sample+cve5":
			srv = withCVE5
		case "sample+epss":
			srv = withEPSS
		}
		both(srv, g["path"].(string), nil, int(status))
	}
	for _, target := range []string{"/status", "/cve?format=ndjson", "/vendors?q=micro", "/vendors/cisco/products?q=unified",
		"/vendors/clashforwindows/products/clash/cve?version=0.20.1", "/cve/batch?names=CVE-2024-5732,CVE-2023-47488,CVE-1999-9999"} {
		both(sample, target, nil, 200)
		both(sample, target, gzip, 200)
	}
	post(sample, "/cve/batch", batchNames("CVE-2024-5732", "Cve-2023-47488", "CVE-1999-9999"), zstd, 200)
	// Built with the CVE JSON 5 records too: details with affected
	// entries and SSVC, and a CVE only a record gives.
	for _, target := range []string{"/cve/CVE-2023-5631/details", "/cve/CVE-2024-6728", "/cve/CVE-2024-6728/details", "/cve?kev=false&cvss=critical"} {
		both(withCVE5, target, nil, 200)
	}
	// Built with EPSS: details with epss, the EPSS filters and orders,
	// and an "EPSS changed" event.
	for _, target := range []string{"/cve/CVE-1999-0095/details", "/cve?sort=risk&format=ndjson", "/cve?epss_min=0.005&sort=epss",
		"/reports/20261122T000000Z/alerts", "/reports/20261122T000000Z/alerts/1"} {
		both(withEPSS, target, nil, 200)
	}
	// NVD's CVE API: its records, and every reason it refuses a query.
	for _, target := range []string{NVDPath + "?cveId=CVE-2021-44228", NVDPath + "?resultsPerPage=20&startIndex=100&noRejected"} {
		both(withCVE5, target, nil, 200)
		both(withCVE5, target, gzip, 200)
	}
	for _, tc := range nvdBadQueries {
		both(withCVE5, NVDPath+"?"+tc.query, nil, 404)
	}
	changes := changesIndex(t)
	ch := liveServer(t, New(func() *index.Index { return changes }, Options{}))
	const report = "/reports/20261122T060000Z"
	for _, target := range []string{"/reports", report, report + "/alerts"} {
		both(ch, target, nil, 200)
	}
	for id := 1; id <= 14; id++ {
		both(ch, report+"/alerts/"+strconv.Itoa(id), nil, 200)
	}
	// NVD's change history: changes, and every reason it refuses a query.
	for _, target := range []string{NVDHistoryPath + "?cveId=CVE-2023-6069", NVDHistoryPath + "?eventName=Initial%20Analysis",
		NVDHistoryPath + "?changeStartDate=2026-11-22T06:00:00.000&changeEndDate=2026-11-22T06:00:00.000&resultsPerPage=3&startIndex=3"} {
		both(ch, target, nil, 200)
		both(ch, target, gzip, 200)
	}
	for _, tc := range nvdHistoryBadQueries {
		both(ch, NVDHistoryPath+"?"+tc.query, nil, 404)
	}

	// Every status documented for an operation came from the server (500
	// only from the panicking route: it has no way in through the others),
	// and so did every media type and error message in the document.
	paths, _ := d.root["paths"].(map[string]any)
	responses := map[string]bool{}
	for _, path := range docKeys(paths) {
		for _, m := range methodsOf(paths[path]) {
			res, _ := d.at(ptr("paths", path, m, "responses"))
			for _, status := range docKeys(res.(map[string]any)) {
				if status != "500" && !lr.statuses[m+" "+path+" "+status] {
					t.Errorf("%s %s: documented status %s never came from the server: add a request to TestOpenAPILiveResponses, or drop the status", m, path, status)
				}
				_, rp := d.object(t, ptr("paths", path, m, "responses", status))
				responses[rp] = true
			}
		}
	}
	comp, _ := d.at("/components/responses")
	for _, name := range docKeys(comp.(map[string]any)) {
		rp := ptr("components", "responses", name)
		responses[rp] = true
		for _, msg := range exampleMessages(t, d, rp) {
			if !lr.messages[rp][msg] {
				t.Errorf("#%s: example message %q never came from the server through this response", rp, msg)
			}
		}
	}
	for _, rp := range docKeys(responses) {
		v, _ := d.at(rp + "/content")
		content, _ := v.(map[string]any)
		for _, mt := range docKeys(content) {
			if !lr.media[rp+" "+mt] {
				t.Errorf("#%s: media type %s never came from the server through this response", rp, mt)
			}
		}
	}
	d.walk(func(p string, v any) bool {
		if !strings.HasSuffix(p, "/headers") || strings.HasPrefix(p, "/components/headers") {
			return true
		}
		for name := range v.(map[string]any) {
			if !lr.headers[http.CanonicalHeaderKey(name)] {
				t.Errorf("#%s: header %s never came from the server", p, name)
			}
		}
		return false
	})
}
