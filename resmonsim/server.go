package resmonsim

import (
	"crypto/subtle"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Guard reasons and sentences (backend-http-api.md §2, §3).
const (
	msgHostRefused   = "resmon answers only requests addressed to 127.0.0.1 or localhost on its own port."
	msgOriginRefused = "resmon answers browser requests only from its own window."
	msgTokenMissing  = "This request needs resmon's local API token."
	msgTokenInvalid  = "The local API token on this request is not this resmon's."
)

// maxBody bounds what a request may send; the real routes take small JSON bodies.
const maxBody = 4 << 20

// maxRecorded bounds the request log; past it the oldest half is dropped.
const maxRecorded = 100000

// call is one routed request, handed to a route handler with s.mu held.
type call struct {
	r    *http.Request
	q    url.Values
	id   int // the numeric path parameter, when the route has one
	body []byte
	now  time.Time
	inst *instance
}

// reply is what a handler answers: a JSON value, or raw bytes with a content type.
type reply struct {
	status  int
	body    any
	raw     []byte
	ctype   string
	headers [][2]string
}

func jsonReply(status int, body any) *reply { return &reply{status: status, body: body} }
func okReply(body any) *reply               { return jsonReply(200, body) }

// detailReply is FastAPI's HTTPException body: {"detail": <string or object>}.
func detailReply(status int, detail any) *reply { return jsonReply(status, o("detail", detail)) }

func guardReply(status int, reason, msg string) *reply {
	r := detailReply(status, o("reason", reason, "message", msg))
	r.headers = append(r.headers, [2]string{"Cache-Control", "no-store"})
	if status == http.StatusUnauthorized {
		r.headers = append(r.headers, [2]string{"WWW-Authenticate", `Bearer realm="resmon"`})
	}
	return r
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	return w.ResponseWriter.Write(b)
}

func (s *Sim) handler(inst *instance) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
		rec := &Recorded{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host,
			Origin: r.Header.Get("Origin"), HasAuth: len(r.Header.Values("Authorization")) > 0,
			RuntimeID: inst.runtimeID, Body: body,
		}
		if !s.opts.Legacy {
			rec.AuthOK = tokenOK(r, inst.token)
		}
		sw := &statusWriter{ResponseWriter: w}
		s.mu.Lock()
		if len(s.requests) >= maxRecorded {
			s.requests = s.requests[len(s.requests)-maxRecorded/2:] // keep the log bounded under benchmarks
		}
		s.requests = append(s.requests, rec)
		delay := s.delay
		if s.pathDelay > 0 && strings.HasPrefix(r.URL.Path, s.pathPrefix) {
			delay = s.pathDelay
		}
		if s.lateFiles == inst && s.inst == inst {
			s.lateFiles = nil
			_ = s.writeFilesLocked(s.lateInPlace)
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			rec.Status = sw.status
			s.mu.Unlock()
		}()

		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if !s.opts.Legacy {
			if rep := guard(r, inst); rep != nil {
				writeReply(sw, rep)
				return
			}
		}
		if f := s.takeFault(r.URL.Path); f != nil {
			writeFault(sw, f)
			return
		}
		rep := s.route(r, body, inst)
		if origin := r.Header.Get("Origin"); origin != "" {
			rep.headers = append(rep.headers, [2]string{"Access-Control-Allow-Origin", origin}, [2]string{"Vary", "Origin"})
		}
		writeReply(sw, rep)
	})
}

// rendererOrigin is the one registered renderer origin: the simulator's own.
func rendererOrigin(inst *instance) string { return "http://127.0.0.1:" + strconv.Itoa(inst.port) }

// guard is LocalApiGuard (§3.1): Host, Origin, preflight carve-out, signed path, token.
func guard(r *http.Request, inst *instance) *reply {
	p := strconv.Itoa(inst.port)
	// Go's server already refuses a request with more than one Host header (400).
	if r.Host != "127.0.0.1:"+p && r.Host != "localhost:"+p {
		return guardReply(403, "host_refused", msgHostRefused)
	}
	origins := r.Header.Values("Origin")
	if len(origins) > 1 || (len(origins) == 1 && origins[0] != rendererOrigin(inst)) {
		return guardReply(403, "origin_refused", msgOriginRefused)
	}
	if r.Method == http.MethodOptions && len(origins) == 1 && r.Header.Get("Access-Control-Request-Method") != "" {
		rep := &reply{status: 200, raw: []byte("OK"), ctype: "text/plain; charset=utf-8"}
		rep.headers = append(rep.headers,
			[2]string{"Access-Control-Allow-Origin", origins[0]},
			[2]string{"Access-Control-Allow-Methods", "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"},
			[2]string{"Vary", "Origin"})
		if r.Header.Get("Access-Control-Request-Private-Network") != "" {
			rep.headers = append(rep.headers, [2]string{"Access-Control-Allow-Private-Network", "true"})
		}
		if h := r.Header.Get("Access-Control-Request-Headers"); h != "" {
			rep.headers = append(rep.headers, [2]string{"Access-Control-Allow-Headers", h})
		}
		return rep
	}
	if isSignedPath(r.URL.Path) {
		return nil
	}
	auths := r.Header.Values("Authorization")
	if len(auths) == 0 {
		return guardReply(401, "token_missing", msgTokenMissing)
	}
	if !tokenOK(r, inst.token) {
		return guardReply(401, "token_invalid", msgTokenInvalid)
	}
	return nil
}

// tokenOK: exactly one Authorization header, scheme bearer (any case), constant-time match.
func tokenOK(r *http.Request, token string) bool {
	auths := r.Header.Values("Authorization")
	if len(auths) != 1 {
		return false
	}
	scheme, value, _ := strings.Cut(strings.TrimSpace(auths[0]), " ")
	if !strings.EqualFold(scheme, "bearer") {
		return false
	}
	value = strings.TrimSpace(value)
	return subtle.ConstantTimeCompare([]byte(value), []byte(token)) == 1
}

func isSignedPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/api/deliveries/")
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(rest, "/bundle")
	return ok && id != "" && strings.Trim(id, "0123456789") == ""
}

func (s *Sim) takeFault(path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !strings.HasPrefix(path, f.PathPrefix) {
			continue
		}
		hit := *f
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &hit
	}
	return nil
}

func writeFault(w *statusWriter, f *Fault) {
	if f.Drop {
		if hj, ok := w.ResponseWriter.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	status := f.Status
	if status == 0 {
		status = 500
		if f.MalformedJSON {
			status = 200
		}
	}
	body := f.Body
	switch {
	case f.MalformedJSON:
		body = `{"detail": "trunc`
	case body == "" && status >= 500:
		// Starlette's own 500 for an unhandled exception is plain text, not JSON.
		writeReply(w, &reply{status: status, raw: []byte("Internal Server Error"), ctype: "text/plain; charset=utf-8"})
		return
	case f.EmptyBody:
		body = ""
	case body == "":
		body = `{"detail":"Simulated fault"}`
	}
	ctype := f.ContentType
	if ctype == "" {
		ctype = "application/json"
	}
	writeReply(w, &reply{status: status, raw: []byte(body), ctype: ctype})
}

func writeReply(w http.ResponseWriter, rep *reply) {
	h := w.Header()
	raw, ctype := rep.raw, rep.ctype
	if raw == nil {
		var err error
		if raw, err = marshalCompact(rep.body); err != nil {
			rep.status, raw = 500, []byte(`{"detail":"Internal Server Error"}`)
		}
		ctype = "application/json"
	}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	for _, kv := range rep.headers {
		h.Add(kv[0], kv[1])
	}
	h.Set("Content-Length", strconv.Itoa(len(raw)))
	if rep.status == 0 {
		rep.status = 200
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(raw)
}

// route dispatches behind the guard, the way Starlette does: the first route matching path
// and method wins; a path match with another method is 405; nothing is 404.
func (s *Sim) route(r *http.Request, body []byte, inst *instance) *reply {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	var partial *routeDef
	for i := range routeTable {
		rd := &routeTable[i]
		raw, ok := rd.matchPath(r.URL.Path)
		if !ok {
			continue
		}
		if rd.Method != method {
			if partial == nil {
				partial = rd
			}
			continue
		}
		c := &call{r: r, q: r.URL.Query(), body: body, now: time.Now(), inst: inst}
		if rd.param != "" {
			n, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil {
				return validation(verr("int_parsing", []any{"path", rd.param},
					"Input should be a valid integer, unable to parse string as an integer", raw))
			}
			c.id = n
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.data.settle(c.now, s.opts.RunDuration)
		return rd.h(s, c)
	}
	if partial != nil {
		allow := []string{partial.Method}
		if partial.Method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
		sort.Strings(allow)
		rep := detailReply(405, "Method Not Allowed")
		rep.headers = append(rep.headers, [2]string{"Allow", strings.Join(allow, ", ")})
		return rep
	}
	return detailReply(404, "Not Found")
}

// ---- validation errors (FastAPI 422 lists) ----

func verr(typ string, loc []any, msg string, input any, ctx ...any) obj {
	e := o("type", typ, "loc", loc, "msg", msg, "input", input)
	if len(ctx) > 0 {
		e = append(e, kv{"ctx", o(ctx...)})
	}
	return e
}

func validation(errs ...obj) *reply {
	l := make([]any, len(errs))
	for i, e := range errs {
		l[i] = e
	}
	return detailReply(422, l)
}

// queryValidation is FastAPI's 422 listing every query parameter that failed to parse, or
// nil when none did.
func queryValidation(errs ...*obj) *reply {
	var failed []obj
	for _, e := range errs {
		if e != nil {
			failed = append(failed, *e)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return validation(failed...)
}

// jsonBody decodes a required JSON object body, or returns FastAPI's 422.
func (c *call) jsonBody() (obj, *reply) {
	if len(strings.TrimSpace(string(c.body))) == 0 {
		return nil, validation(verr("missing", []any{"body"}, "Field required", nil))
	}
	v, off, err := decodeOrdered(c.body)
	if err != nil {
		return nil, validation(verr("json_invalid", []any{"body", off}, "JSON decode error", obj{},
			"error", "Expecting value"))
	}
	m, ok := v.(obj)
	if !ok {
		return nil, validation(verr("model_attributes_type", []any{"body"},
			"Input should be a valid dictionary or object to extract fields from", v))
	}
	return m, nil
}

// queryInt reads an integer query parameter with FastAPI's bounds errors.
func (c *call) queryInt(name string, def int, ge, le *int) (int, *obj) {
	raw, ok := c.q[name]
	if !ok || len(raw) == 0 {
		return def, nil
	}
	v := raw[len(raw)-1]
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		e := verr("int_parsing", []any{"query", name}, "Input should be a valid integer, unable to parse string as an integer", v)
		return 0, &e
	}
	if ge != nil && n < *ge {
		e := verr("greater_than_equal", []any{"query", name}, "Input should be greater than or equal to "+strconv.Itoa(*ge), v, "ge", *ge)
		return 0, &e
	}
	if le != nil && n > *le {
		e := verr("less_than_equal", []any{"query", name}, "Input should be less than or equal to "+strconv.Itoa(*le), v, "le", *le)
		return 0, &e
	}
	return n, nil
}

// queryBool reads a boolean query parameter with pydantic's lax spellings.
func (c *call) queryBool(name string) (bool, *obj) {
	raw, ok := c.q[name]
	if !ok || len(raw) == 0 {
		return false, nil
	}
	v := raw[len(raw)-1]
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "t", "yes", "y", "on":
		return true, nil
	case "0", "false", "f", "no", "n", "off":
		return false, nil
	}
	e := verr("bool_parsing", []any{"query", name}, "Input should be a valid boolean, unable to interpret input", v)
	return false, &e
}

func (c *call) queryStr(name, def string) string {
	if v, ok := c.q[name]; ok && len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func intp(n int) *int { return &n }
