package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handlerFunc serves one decoded request. A nil response with a nil error
// means "send nothing" (Produce with acks=0). A non-nil error closes the
// connection: Kafka-visible failures belong in the response's error codes.
type handlerFunc func(r *request, req kmsg.Request) (kmsg.Response, error)

// decodeFunc decodes a request body (what follows the request header and
// its tagged fields) in place of kmsg's ReadFrom, for an API whose every
// version is flexible. The result may be connection memory reused by the
// next such request (the answer is written before that is read).
type decodeFunc func(c *conn, version int16, body []byte) (kmsg.Request, error)

// apiEntry is everything the request path knows of one API. The fields
// after handle are set by apiOptions and read per request straight from
// the entry handleFrame has already looked up, so they cost nothing beyond
// the lookup that checks the version.
type apiEntry struct {
	key        int16
	minVersion int16
	maxVersion int16
	handle     handlerFunc

	// coordinatorFree: the API touches neither the group nor the share
	// state, so it is served while the coordinators load
	// (loadCoordinators); every other request waits for them in
	// handleFrame.
	coordinatorFree bool
	// inline: the API never parks, so the reader goroutine may handle it
	// itself while the processor is idle (conn.handleInline). A long-poll
	// is left to the processor, so that a client closing its connection
	// meanwhile is noticed at once.
	inline bool
	// waitsInHandler: the handling time includes waiting (long polls,
	// rebalances). Kafka counts only thread time toward
	// request_percentage, parking these in purgatory; sharq does not split
	// the two, so the request quota leaves them out rather than charge the
	// wait (throttleFor).
	waitsInHandler bool
	// decode, when set, decodes the body instead of kmsg (the reused
	// ShareFetch and ShareAcknowledge decoders).
	decode decodeFunc
}

// apiOption sets what an API needs of the request path beyond its
// handler; regKey applies them at registration.
type apiOption func(*apiEntry)

// coordinatorFree, servedInline, waitsInHandler and decodedBy are the
// apiOptions; see the apiEntry fields they set.
func coordinatorFree(e *apiEntry) { e.coordinatorFree = true }
func servedInline(e *apiEntry)    { e.inline = true }
func waitsInHandler(e *apiEntry)  { e.waitsInHandler = true }
func decodedBy(d decodeFunc) apiOption {
	return func(e *apiEntry) { e.decode = d }
}

// registry is the one table of supported APIs. It drives dispatch and the
// ApiVersions response; nothing else lists APIs.
var registry [maxAPIKey + 1]*apiEntry

const maxAPIKey = 127

// regKey registers an API. It is called from init() in each API's file, so a
// duplicate or out-of-range registration is a programming error and panics at
// start-up rather than misbehaving on the wire; so does a combination the
// request path cannot serve (an inline API that waits, a custom decoder for
// an API with non-flexible versions: handleFrame skips the header's tagged
// fields before calling it).
func regKey(key, minVersion, maxVersion int16, h handlerFunc, opts ...apiOption) {
	if key < 0 || key > maxAPIKey || registry[key] != nil {
		panic("broker: bad or duplicate API registration")
	}
	req := kmsg.RequestForKey(key)
	if req == nil || maxVersion > req.MaxVersion() || minVersion > maxVersion || minVersion < 0 {
		panic("broker: API version range not supported by kmsg")
	}
	e := &apiEntry{key: key, minVersion: minVersion, maxVersion: maxVersion, handle: h}
	for _, o := range opts {
		o(e)
	}
	if e.inline && e.waitsInHandler {
		panic("broker: an API that waits in its handler cannot be served inline")
	}
	if e.decode != nil {
		for v := minVersion; v <= maxVersion; v++ {
			if req.SetVersion(v); !req.IsFlexible() {
				panic("broker: a custom decoder needs every version flexible")
			}
		}
	}
	registry[key] = e
}

func lookupAPI(key int16) *apiEntry {
	if key < 0 || key > maxAPIKey {
		return nil
	}
	return registry[key]
}

// registeredAPIs returns the table sorted by key.
func registeredAPIs() []*apiEntry {
	var out []*apiEntry
	for _, e := range registry {
		if e != nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
