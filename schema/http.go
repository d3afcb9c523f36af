package schema

// The REST API (Confluent's rest/resources/*Resource.java over rest-utils):
// routes, content negotiation, request bodies and the error body every
// failure gets. Handlers per resource are in http_*.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
)

// Media types (client/rest/Versions.java). Responses prefer the first,
// weighted 1, 0.9 and 0.5 as Confluent's @Produces are; requests may also
// come as application/octet-stream (no content type given).
const (
	mediaV1      = "application/vnd.schemaregistry.v1+json"
	mediaDefault = "application/vnd.schemaregistry+json"
	mediaJSON    = "application/json"
	mediaGeneric = "application/octet-stream"
)

var produces = []struct {
	typ string
	qs  float64
}{{mediaV1, 1}, {mediaDefault, 0.9}, {mediaJSON, 0.5}}

// Operation is what a request does to a subject, for authorization.
type Operation int

const (
	OpDescribe    Operation = iota // see that it exists (listings)
	OpRead                         // read its schemas, look up, check compatibility
	OpWrite                        // register
	OpDelete                       // delete versions
	OpReadConfig                   // read its config or mode
	OpWriteConfig                  // change its config or mode
)

func (o Operation) String() string {
	return [...]string{"Describe", "Read", "Write", "Delete", "DescribeConfigs", "AlterConfigs"}[o]
}

// Authenticator identifies a request's principal ("User:alice"); ok false
// answers 401.
type Authenticator interface {
	Authenticate(r *http.Request) (principal string, ok bool)
}

// Authorizer decides whether a principal connecting from host (an IP) may
// do op on a subject; subject "" is the registry as a whole (global config
// and mode, contexts).
type Authorizer interface {
	Allowed(principal, host string, op Operation, subject string) bool
}

// HandlerOptions configure the REST API.
type HandlerOptions struct {
	Authenticator Authenticator // nil: every request is User:ANONYMOUS
	Authorizer    Authorizer    // nil: everything is allowed
	Realm         string        // basic auth realm ("SchemaRegistry")
	// MaxBodyBytes bounds a request body (0: 16 MiB).
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// handler serves the REST API.
type handler struct {
	reg    *Registry
	opts   HandlerOptions
	logger *slog.Logger
	routes []route
}

type route struct {
	method string
	path   []string // literal segments, "{name}" for a variable
	fn     func(*call)
}

// call is one request being served.
type call struct {
	h         *handler
	w         http.ResponseWriter
	r         *http.Request
	vars      map[string]string
	query     url.Values
	media     string // the negotiated response type
	principal string
}

// NewHandler returns the REST API over reg.
func NewHandler(reg *Registry, opts HandlerOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 16 << 20
	}
	if opts.Realm == "" {
		opts.Realm = "SchemaRegistry"
	}
	if opts.Logger == nil {
		opts.Logger = reg.logger
	}
	h := &handler{reg: reg, opts: opts, logger: opts.Logger}
	h.subjectRoutes()
	h.schemaRoutes()
	h.configRoutes()
	h.modeRoutes()
	h.compatibilityRoutes()
	h.miscRoutes()
	return h
}

func (h *handler) handle(method, pattern string, fn func(*call)) {
	h.routes = append(h.routes, route{method: method, path: splitPath(pattern), fn: fn})
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r, query: r.URL.Query(), media: mediaV1}
	defer func() {
		if v := recover(); v != nil {
			h.logger.Error("schema registry: handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			c.fail(&Error{Status: http.StatusInternalServerError, Code: http.StatusInternalServerError, Message: "Internal Server Error"})
		}
	}()
	// Jetty's authentication runs before Jersey matches anything; Jersey
	// then answers an unknown path 404, a method 405, Accept 406 and
	// Content-Type 415, in that order.
	if a := h.opts.Authenticator; a != nil {
		p, ok := a.Authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+h.opts.Realm+`"`)
			c.fail(&Error{Status: http.StatusUnauthorized, Code: http.StatusUnauthorized, Message: "Unauthorized"})
			return
		}
		c.principal = p
	} else {
		c.principal = "User:ANONYMOUS"
	}
	segs := splitPath(r.URL.EscapedPath())
	var matched *route
	pathMatched := false
	for i := range h.routes {
		rt := &h.routes[i]
		vars, ok := matchPath(rt.path, segs)
		if !ok {
			continue
		}
		pathMatched = true
		if rt.method == r.Method || (rt.method == http.MethodGet && r.Method == http.MethodHead) {
			matched, c.vars = rt, vars
			break
		}
	}
	switch {
	case matched == nil && pathMatched:
		c.fail(errHTTP(http.StatusMethodNotAllowed))
		return
	case matched == nil:
		c.fail(errHTTP(http.StatusNotFound))
		return
	}
	media, ok := negotiate(r.Header.Values("Accept"))
	if !ok {
		c.fail(errHTTP(http.StatusNotAcceptable))
		return
	}
	c.media = media
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if !consumable(r.Header.Get("Content-Type")) {
			c.fail(errHTTP(http.StatusUnsupportedMediaType))
			return
		}
	}
	matched.fn(c)
}

// matchPath matches escaped segments against a route; variables are
// unescaped (a subject may hold an escaped slash). A trailing slash is
// allowed, as Jersey allows it.
func matchPath(route, segs []string) (map[string]string, bool) {
	if len(route) != len(segs) {
		return nil, false
	}
	var vars map[string]string
	for i, p := range route {
		if strings.HasPrefix(p, "{") {
			v, err := url.PathUnescape(segs[i])
			if err != nil || segs[i] == "" {
				return nil, false // Jersey's {var} is [^/]+
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[p[1:len(p)-1]] = v
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return vars, true
}

// negotiate picks the response type for the Accept headers: the type the
// client weights highest times Confluent's weights; none acceptable is 406.
func negotiate(accept []string) (string, bool) {
	if len(accept) == 0 {
		return mediaV1, true
	}
	best, bestQ := "", 0.0
	for _, header := range accept {
		for _, part := range strings.Split(header, ",") {
			typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if v, err := strconv.ParseFloat(s, 64); err == nil {
					q = v
				}
			}
			for _, p := range produces {
				if !mediaMatches(typ, p.typ) {
					continue
				}
				if w := q * p.qs; w > bestQ {
					best, bestQ = p.typ, w
				}
			}
		}
	}
	return best, best != ""
}

func mediaMatches(pattern, typ string) bool {
	switch {
	case pattern == "*/*" || pattern == typ:
		return true
	case strings.HasSuffix(pattern, "/*"):
		return strings.HasPrefix(typ, strings.TrimSuffix(pattern, "*"))
	}
	return false
}

func consumable(contentType string) bool {
	if contentType == "" {
		return true
	}
	typ, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch typ {
	case mediaV1, mediaDefault, mediaJSON, mediaGeneric:
		return true
	}
	return false
}

// ok writes a JSON answer.
func (c *call) ok(status int, v any) {
	c.w.Header().Set("Content-Type", c.media)
	c.w.WriteHeader(status)
	if c.r.Method == http.MethodHead || status == http.StatusNoContent {
		return
	}
	c.w.Write(marshal(v))
}

// raw writes a schema's text as it is (Jersey writes a String entity
// unquoted).
func (c *call) raw(s string) {
	c.w.Header().Set("Content-Type", c.media)
	c.w.WriteHeader(http.StatusOK)
	if c.r.Method != http.MethodHead {
		io.WriteString(c.w, s)
	}
}

func (c *call) fail(e *Error) {
	if e.Status >= 500 {
		c.h.logger.Error("schema registry request failed", "method", c.r.Method, "path", c.r.URL.Path, "code", e.Code, "message", e.Message)
	}
	c.w.Header().Set("Content-Type", c.media)
	c.w.WriteHeader(e.Status)
	if c.r.Method != http.MethodHead {
		c.w.Write(marshal(struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}{e.Code, e.Message}))
	}
}

// allow checks the principal's permission; false has answered 403.
func (c *call) allow(op Operation, subject string) bool {
	if c.permitted(op, subject) {
		return true
	}
	what := "Subject: " + subject
	if subject == "" {
		what = "Registry"
	}
	c.fail(&Error{Status: http.StatusForbidden, Code: CodeDenied,
		Message: fmt.Sprintf("User is denied operation %s on %s", op, what)})
	return false
}

func (c *call) permitted(op Operation, subject string) bool {
	a := c.h.opts.Authorizer
	if a == nil {
		return true
	}
	host, _, err := net.SplitHostPort(c.r.RemoteAddr)
	if err != nil {
		host = c.r.RemoteAddr
	}
	return a.Allowed(c.principal, host, op, subject)
}

func (c *call) ctx() context.Context { return c.r.Context() }

// boolParam is Jersey's boolean @QueryParam: true when "true" in any case.
func (c *call) boolParam(name string) bool {
	return strings.EqualFold(c.query.Get(name), "true")
}

// intParam is an int @QueryParam with a default; a value that is not an
// int is Jersey's 404.
func (c *call) intParam(name string, def int) (int, bool) {
	s := c.query.Get(name)
	if _, present := c.query[name]; !present {
		return def, true
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		c.fail(errHTTP(http.StatusNotFound))
		return 0, false
	}
	return int(v), true
}

// page applies offset and limit (normalizeLimit: a limit outside
// 1..maxLimit is defLimit).
func page[T any](c *call, items []T, defLimit, maxLimit int) ([]T, bool) {
	offset, ok := c.intParam("offset", 0)
	if !ok {
		return nil, false
	}
	limit, ok := c.intParam("limit", -1)
	if !ok {
		return nil, false
	}
	if limit <= 0 || limit > maxLimit {
		limit = defLimit
	}
	if offset < 0 {
		offset = 0
	}
	if offset >= len(items) {
		return items[:0], true
	}
	items = items[offset:]
	if limit < len(items) {
		items = items[:limit]
	}
	return items, true
}

const unlimited = int(^uint32(0) >> 1)

// versionParam is VersionId: "latest" (-1) or 1..2^31-1; else 42202.
func (c *call) versionParam() (int32, bool) {
	s := c.vars["version"]
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "latest") {
		return -1, true
	}
	v, err := strconv.ParseInt(t, 10, 32)
	if err != nil || (v <= 0 && v != -1) {
		c.fail(errInvalidVersion(s))
		return 0, false
	}
	return int32(v), true
}

// idParam is an Integer path parameter: not one is Jersey's 404.
func (c *call) idParam() (int32, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(c.vars["id"]), 10, 32)
	if err != nil {
		c.fail(errHTTP(http.StatusNotFound))
		return 0, false
	}
	return int32(v), true
}

// body reads the JSON request body into v. A missing body is bean
// validation's 422 (@NotNull); malformed JSON rest-utils' 400.
func (c *call) body(v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, c.h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			c.fail(&Error{Status: http.StatusRequestEntityTooLarge, Code: http.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("Request body larger than %d bytes", c.h.opts.MaxBodyBytes)})
			return false
		}
		c.fail(errBadRequest("Error reading the request body: " + err.Error()))
		return false
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		c.fail(errUnprocessable("The request entity must not be null"))
		return false
	}
	if err := decodeJSON(data, v); err != nil {
		c.fail(errBadRequest(err.Error()))
		return false
	}
	return true
}

// decodeJSON decodes one JSON value, with a message like Jackson's for a
// type mismatch; trailing data is refused.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "(root)"
			}
			return fmt.Errorf("Cannot deserialize value of type `%s` from %s (field %q)", te.Type, te.Value, field)
		}
		return fmt.Errorf("Unexpected content: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("Unexpected content after the JSON value")
	}
	return nil
}
