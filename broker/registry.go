package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handlerFunc serves one decoded request. A nil response with a nil error
// means "send nothing" (Produce with acks=0). A non-nil error closes the
// connection: Kafka-visible failures belong in the response's error codes.
type handlerFunc func(r *request, req kmsg.Request) (kmsg.Response, error)

type apiEntry struct {
	key        int16
	minVersion int16
	maxVersion int16
	handle     handlerFunc
}

// registry is the one table of supported APIs. It drives dispatch and the
// ApiVersions response; nothing else lists APIs.
var registry [maxAPIKey + 1]*apiEntry

const maxAPIKey = 127

// regKey registers an API. It is called from init() in each API's file, so a
// duplicate or out-of-range registration is a programming error and panics at
// start-up rather than misbehaving on the wire.
func regKey(key, minVersion, maxVersion int16, h handlerFunc) {
	if key < 0 || key > maxAPIKey || registry[key] != nil {
		panic("broker: bad or duplicate API registration")
	}
	req := kmsg.RequestForKey(key)
	if req == nil || maxVersion > req.MaxVersion() || minVersion > maxVersion || minVersion < 0 {
		panic("broker: API version range not supported by kmsg")
	}
	registry[key] = &apiEntry{key: key, minVersion: minVersion, maxVersion: maxVersion, handle: h}
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
