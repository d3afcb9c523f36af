package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

// conn is one client connection. A reader goroutine reads frames; a
// processor goroutine decodes, handles and writes the answers in order. Two
// frame buffers circulate between them, so the reader is at most one request
// ahead (Kafka mutes a connection while a request is in flight) and notices a
// closed socket while a long-poll is parked, which cancels the conn context.
// A request that never parks, arriving while the processor is idle, is
// handled by the reader itself (handleInline): that saves a goroutine
// hand-off and the wake-up of a second thread per request, which is most of
// a ShareAcknowledge's cost to the broker.
//
// Request memory. A request's frame is one of those two buffers, and the
// frame after next overwrites it. kmsg's ReadFrom copies strings out of
// the frame, but every []byte field (and kmsg.Tags) aliases it, and the
// ShareFetch and ShareAcknowledge decoders reuse their slices and the
// share scratch for the connection's next such request. The rule: the
// broker copies at the boundary. A handler never hands a domain package
// request memory the callee may keep past the call; it copies first
// (bytes.Clone), so a domain package owns whatever it is given and needs
// no knowledge of frames. Callees that keep nothing of their bytes get
// them as they are, which keeps the hot paths free of copies:
// log.Log.Append (the batch is written into the segment),
// share.Scratch.AddAck (the types are copied), the SASL servers and
// clientmetrics.Manager.Push (decoded into strings during the call). The
// build tag sharqpoison (poison.go) overwrites all of it as soon as the
// request is answered, so a kept alias breaks the client tests at once
// instead of whenever a later frame happens to land on it.
type conn struct {
	s        *Server
	nc       net.Conn
	listener int // index into Server.listeners
	logger   *slog.Logger

	// node is the node id whose listener accepted the connection: with
	// sharq.virtual.brokers > 1 it decides what this connection is the
	// leader or coordinator of (vnodes.go); otherwise node.id.
	node int32
	// shareLeads is share.FetchRequest.NotLeader for node (vnodes.go).
	shareLeads func(topicID [16]byte, partition int32) bool

	ctx    context.Context
	cancel context.CancelFunc

	frames chan []byte // read frames, in order
	// queued counts frames sent to the processor and not yet answered.
	// Only the reader adds to it, so when it reads 0 the processor is idle
	// and stays so until the reader sends again.
	queued atomic.Int32
	free   chan []byte // frame buffers back to the reader
	wbuf   []byte      // response buffer, owned by whoever handles the request
	// fetchBuf holds record bytes read for the current Fetch; it is reused
	// because the response is written before the next request is handled.
	fetchBuf []byte
	// fetchAborted holds the aborted transactions of a read_committed
	// Fetch's partitions (as ranges of it), reused like fetchBuf.
	fetchAborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
	// abortedScratch receives log.AbortedTransactions before conversion.
	abortedScratch []log.AbortedTxn
	// share is the reused memory of ShareFetch and ShareAcknowledge,
	// sfDecoder and saDecoder the reused decoded ShareFetch and
	// ShareAcknowledge (share_fetch_decode.go, share_ack_decode.go).
	share     *shareScratch
	sfDecoder *shareFetchDecoder
	saDecoder *shareAckDecoder
	// cur is the request being handled (one at a time per connection);
	// clientID the last client id, kept while the next is the same.
	cur      request
	clientID string
	recw     recordsWriter // Fetch and ShareFetch answers: recordswrite.go
	auth     connAuth      // principal and SASL state: auth.go
	// id names the connection to the client metrics manager, which drops
	// the client instance last seen on it when it closes; software* are
	// what ApiVersions v3+ said (KIP-511), for client metrics selectors.
	id                            uint64
	softwareName, softwareVersion string

	closeOnce sync.Once
}

// request is what a handler sees of the request it serves.
type request struct {
	s             *Server
	c             *conn
	ctx           context.Context
	key           int16
	version       int16
	correlationID int32
	clientID      string
}

func (s *Server) newConn(nc net.Conn, listener int) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &conn{
		s:        s,
		nc:       nc,
		listener: listener,
		node:     s.cfg.NodeID,
		logger:   s.logger.With("remote", nc.RemoteAddr().String()),
		ctx:      ctx,
		cancel:   cancel,
		frames:   make(chan []byte, 1),
		free:     make(chan []byte, 2),
		id:       s.connSeq.Add(1),
	}
	c.free <- make([]byte, 0, 4096)
	c.free <- make([]byte, 0, 4096)
	return c
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.nc.Close()
	})
}

// serve runs the connection until it closes. It never panics: a panic in a
// handler is logged with its stack and closes only this connection.
func (c *conn) serve() {
	defer c.s.connDone(c)
	defer c.close()
	if !c.startSecurity() {
		return
	}
	go c.readLoop()
	c.processLoop()
	// A frame read but never handled still holds its reserved bytes; the
	// reader ends once the connection is closed.
	c.close()
	for frame := range c.frames {
		c.s.reqBytes.release(int64(len(frame)))
	}
}

// errWrongProtocol marks a peer that does not speak Kafka on this port.
var errWrongProtocol = errors.New("not a Kafka client")

// Frame buffers: a body is read into a buffer that grows as its bytes
// arrive (by doubling from readChunk), so a client that declares a huge frame
// and sends little of it costs little memory. A buffer larger than
// retainFrameBuf is dropped once its frame was handled, so a connection that
// sent one big request does not keep it alive while idle.
const (
	readChunk      = 64 << 10
	retainFrameBuf = 1 << 20
)

func (c *conn) readLoop() {
	defer close(c.frames)
	var hdr [4]byte
	for {
		var buf []byte
		select {
		case buf = <-c.free:
		case <-c.ctx.Done():
			return
		}
		// connections.max.idle.ms: a connection with no request for that
		// long is closed. Checking the context after arming the deadline
		// closes the race with Shutdown, which cancels and then sets an
		// immediate deadline.
		if !c.armDeadline(c.s.cfg.ConnectionsMaxIdleMs) {
			return
		}
		n, err := io.ReadAtLeast(c.nc, hdr[:], 1)
		if err == nil && n < len(hdr) {
			// A frame has begun: the rest of its header must come within
			// the request-read timeout, not the idle one.
			if !c.armDeadline(c.s.cfg.RequestReadTimeoutMs) {
				return
			}
			_, err = io.ReadFull(c.nc, hdr[n:])
		}
		if err != nil {
			c.readFailed(err)
			return
		}
		size := int32(binary.BigEndian.Uint32(hdr[:]))
		if err := c.checkSize(hdr, size); err != nil {
			c.logger.Warn("closing connection", "err", err)
			c.close()
			return
		}
		// queued.max.request.bytes: until there is room this connection is
		// not read, which is the back-pressure. The wait is not a stall of
		// the client's, so its body timeout starts once room is granted.
		if err := c.s.reqBytes.acquire(c.ctx, int64(size)); err != nil {
			return
		}
		if !c.armDeadline(c.s.cfg.RequestReadTimeoutMs) {
			c.s.reqBytes.release(int64(size))
			return
		}
		buf, err = readBody(c.nc, buf, int(size))
		if err != nil {
			c.s.reqBytes.release(int64(size))
			droppedFrameBuf(cap(buf))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && c.ctx.Err() == nil {
				c.logger.Info("closing connection: request frame not received in time",
					"declared_bytes", size, "received_bytes", len(buf),
					"timeout_ms", c.s.cfg.RequestReadTimeoutMs)
			}
			c.readFailed(err)
			return
		}
		if c.queued.Load() == 0 && c.handleInline(buf) {
			err := c.handleSafely(buf)
			if poisonFrames {
				c.poisonRequest(buf)
			}
			c.s.reqBytes.release(int64(size))
			c.free <- recycle(buf)
			if err != nil {
				c.close()
				return
			}
			continue
		}
		c.queued.Add(1)
		select {
		case c.frames <- buf:
		case <-c.ctx.Done():
			c.s.reqBytes.release(int64(size))
			return
		}
	}
}

// handleInline reports whether the reader handles frame itself (the
// processor being idle, see queued): a request of an API registered
// servedInline never parks, so the socket goes unread only for as long as
// it computes.
func (c *conn) handleInline(frame []byte) bool {
	if c.auth.raw || len(frame) < 2 || c.s.faults.On() {
		// While fault rules are live a request may hang (faults.go), which
		// the reader must not do: it is what notices the client leaving.
		return false
	}
	api := lookupAPI(int16(binary.BigEndian.Uint16(frame)))
	return api != nil && api.inline
}

// handleSafely is handleFrame for the reader: a panic is logged and closes
// only this connection, and a failure is counted and logged as the
// processor does.
func (c *conn) handleSafely(frame []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.panics.Add(1)
			c.logger.Error("panic serving connection; closing it", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	if err = c.handleFrame(frame); err != nil {
		c.s.metrics.failed(int16(binary.BigEndian.Uint16(frame)))
		c.logger.Info("closing connection", "err", err)
	}
	return err
}

// armDeadline sets the read deadline ms from now (none if ms <= 0) and
// reports whether the connection is still open; see readLoop for why the
// context is checked after the deadline is set.
func (c *conn) armDeadline(ms int64) bool {
	if ms > 0 {
		c.nc.SetReadDeadline(time.Now().Add(time.Duration(ms) * time.Millisecond))
	}
	return c.ctx.Err() == nil
}

// readBody reads a size-byte frame body into buf, reusing it when it is big
// enough and otherwise growing it only as bytes arrive: never more than
// twice what was received, plus one chunk. On error it returns what it read.
func readBody(r io.Reader, buf []byte, size int) ([]byte, error) {
	if cap(buf) >= size {
		buf = buf[:size]
		n, err := io.ReadFull(r, buf)
		return buf[:n], err
	}
	buf = buf[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(max(2*cap(buf), readChunk), size))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < size {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// recycle readies a handled frame's buffer for the next frame.
func recycle(frame []byte) []byte {
	if cap(frame) > retainFrameBuf {
		droppedFrameBuf(cap(frame))
		return make([]byte, 0, 4096)
	}
	return frame[:0]
}

// hugeFrameBuf is the size of a dropped frame buffer after which its pages
// are handed back to the OS: the Go runtime would otherwise keep them (and
// the RSS) long after the frame, with no allocation to trigger a GC.
const hugeFrameBuf = 16 << 20

var freeOSMemory struct {
	sync.Mutex
	pending bool
}

// droppedFrameBuf notes that a frame buffer of n bytes became garbage. For
// a huge one it schedules, coalesced, a debug.FreeOSMemory shortly after,
// by when the buffer is unreachable; a burst of big frames costs one.
func droppedFrameBuf(n int) {
	if n < hugeFrameBuf {
		return
	}
	freeOSMemory.Lock()
	defer freeOSMemory.Unlock()
	if freeOSMemory.pending {
		return
	}
	freeOSMemory.pending = true
	time.AfterFunc(200*time.Millisecond, func() {
		freeOSMemory.Lock()
		freeOSMemory.pending = false
		freeOSMemory.Unlock()
		debug.FreeOSMemory()
	})
}

func (c *conn) readFailed(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && c.ctx.Err() == nil {
		c.logger.Debug("read failed", "err", err)
	}
	c.cancel()
}

// checkSize rejects a frame before anything is allocated for it.
func (c *conn) checkSize(hdr [4]byte, size int32) error {
	switch {
	case bytes.Equal(hdr[:], []byte("GET ")), bytes.Equal(hdr[:], []byte("POST")),
		bytes.Equal(hdr[:], []byte("PUT ")), bytes.Equal(hdr[:], []byte("HEAD")):
		return fmt.Errorf("%w: an HTTP request on the Kafka port", errWrongProtocol)
	case hdr[0] == 0x16 && hdr[1] == 0x03:
		return fmt.Errorf("%w: a TLS handshake on a PLAINTEXT listener", errWrongProtocol)
	case size < 8: // api key, version, correlation id, client id length
		return fmt.Errorf("invalid request size %d", size)
	case size > c.s.cfg.SocketRequestMaxBytes:
		return fmt.Errorf("request size %d is larger than socket.request.max.bytes %d", size, c.s.cfg.SocketRequestMaxBytes)
	}
	return nil
}

func (c *conn) processLoop() {
	var cur []byte // the frame being handled: its bytes are returned even on a panic
	defer func() {
		if p := recover(); p != nil {
			c.s.panics.Add(1)
			c.logger.Error("panic serving connection; closing it", "panic", p, "stack", string(debug.Stack()))
		}
		if cur != nil {
			if poisonFrames {
				c.poisonRequest(cur)
			}
			c.s.reqBytes.release(int64(len(cur)))
		}
	}()
	for frame := range c.frames {
		cur = frame
		err := c.handleFrame(frame)
		if err != nil && len(frame) >= 2 {
			c.s.metrics.failed(int16(binary.BigEndian.Uint16(frame)))
		}
		if poisonFrames {
			// Also after a long-poll: it parked inside handleFrame.
			c.poisonRequest(frame)
		}
		cur = nil
		c.s.reqBytes.release(int64(len(frame)))
		c.free <- recycle(frame)
		c.queued.Add(-1)
		if err != nil {
			c.logger.Info("closing connection", "err", err)
			return
		}
	}
}

// handleFrame decodes, dispatches and answers one request frame.
func (c *conn) handleFrame(frame []byte) error {
	start := time.Now()
	if c.auth.raw {
		return c.rawSASL(frame)
	}
	key := int16(binary.BigEndian.Uint16(frame[0:]))
	version := int16(binary.BigEndian.Uint16(frame[2:]))
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	rest := frame[8:]

	r := &c.cur
	*r = request{s: c.s, c: c, ctx: c.ctx, key: key, version: version, correlationID: corr}
	var clientID string
	if len(rest) < 2 {
		return fmt.Errorf("truncated request header (key %d)", key)
	}
	n := int16(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if n >= 0 {
		if int(n) > len(rest) {
			return fmt.Errorf("truncated client id (key %d)", key)
		}
		if string(rest[:n]) != c.clientID {
			c.clientID = string(rest[:n])
		}
		clientID = c.clientID
		rest = rest[n:]
	}
	r.clientID = clientID

	api := lookupAPI(key)
	if api == nil {
		return fmt.Errorf("unsupported API key %d", key)
	}
	if version < api.minVersion || version > api.maxVersion {
		if key == apiVersionsKey {
			// KIP-511: answer in v0 shape so the client can learn our range.
			return c.writeResponse(r, unsupportedAPIVersions(), 0, start, len(frame)+4)
		}
		return fmt.Errorf("unsupported version %d of %s (supported %d-%d)", version, kmsg.NameForKey(key), api.minVersion, api.maxVersion)
	}
	if err := c.checkAuth(key); err != nil {
		return err
	}

	if !api.coordinatorFree {
		if err := c.s.awaitCoordinators(c.ctx); err != nil {
			return fmt.Errorf("%s waiting for the coordinators: %w", kmsg.NameForKey(key), err)
		}
	}
	if api.decode != nil {
		// Request header v2 (tagged fields; regKey checked every version
		// is flexible), then the API's own decoder.
		var err error
		if rest, err = skipTags(rest); err != nil {
			return fmt.Errorf("request header tags of %s v%d: %w", kmsg.NameForKey(key), version, err)
		}
		req, err := api.decode(c, version, rest)
		if err != nil {
			return fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(key), version, err)
		}
		return c.dispatch(r, api, req, version, start, len(frame)+4)
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	if req.IsFlexible() {
		// Request header v2: tagged fields after the client id.
		var err error
		if rest, err = skipTags(rest); err != nil {
			return fmt.Errorf("request header tags of %s v%d: %w", kmsg.NameForKey(key), version, err)
		}
	}
	if err := req.ReadFrom(rest); err != nil {
		if key == apiVersionsKey {
			// Kafka answers an undecodable ApiVersions with INVALID_REQUEST.
			resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
			resp.ErrorCode = errInvalidRequest
			return c.writeResponse(r, resp, version, start, len(frame)+4)
		}
		return fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(key), version, err)
	}
	return c.dispatch(r, api, req, version, start, len(frame)+4)
}

// dispatch runs a decoded request's handler and writes its answer.
func (c *conn) dispatch(r *request, api *apiEntry, req kmsg.Request, version int16, start time.Time, inBytes int) error {
	key := r.key
	var resp kmsg.Response
	var err error
	if c.s.faults.On() { // fault rules (faults.go): one atomic load while there are none
		resp, err = c.handleFaulted(r, api, req)
	} else {
		resp, err = c.answer(r, api, req)
	}
	if err != nil {
		return fmt.Errorf("%s v%d: %w", kmsg.NameForKey(key), version, err)
	}
	throttle := c.s.throttleFor(r, api, req, resp, inBytes, time.Since(start))
	if t, ok := resp.(kmsg.ThrottleResponse); ok && throttle > 0 && resp != nil {
		if cur, _ := t.Throttle(); int64(cur) < throttle.Milliseconds() {
			t.(kmsg.SetThrottleResponse).SetThrottle(int32(throttle.Milliseconds()))
		}
	}
	if resp == nil {
		c.s.metrics.observe(key, start, inBytes, 0)
	} else if err := c.writeResponse(r, resp, version, start, inBytes); err != nil {
		return err
	}
	c.mute(throttle)
	return c.auth.closeAfter // a failed authentication is answered, then closed
}

// answer answers a request for real: through the virtual brokers' routing
// (vnodes_route.go) when there are several nodes, else the handler itself.
func (c *conn) answer(r *request, api *apiEntry, req kmsg.Request) (kmsg.Response, error) {
	if c.s.virtual {
		return c.s.handleVirtual(r, api, req)
	}
	return api.handle(r, req)
}

// mute holds the connection's next request for d, as Kafka mutes a
// throttled client's channel after sending its response.
func (c *conn) mute(d time.Duration) {
	if d <= 0 {
		return
	}
	c.s.metrics.throttled(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}

// writeResponse encodes the response header and body into the reused buffer
// and writes it. The request is counted before the write, so a client that
// has its answer also sees it in the metrics.
func (c *conn) writeResponse(r *request, resp kmsg.Response, version int16, start time.Time, inBytes int) error {
	resp.SetVersion(version)
	// Response header v1 (tagged fields) for flexible versions, except that
	// ApiVersions always answers with header v0.
	b := appendResponseHead(c.wbuf[:0], r.correlationID, resp.IsFlexible() && r.key != apiVersionsKey)
	if bufs, total, enc, ok := c.recw.frame(b, resp, resp.IsFlexible()); ok {
		c.wbuf = enc[:0]
		c.s.metrics.observe(r.key, start, inBytes, total)
		v := net.Buffers(bufs)
		_, err := v.WriteTo(c.nc)
		return err
	}
	b = resp.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.wbuf = b
	if cap(c.wbuf) > 1<<20 {
		// Do not keep a huge fetch buffer around for an idle connection.
		defer func() { c.wbuf = nil }()
	}
	c.s.metrics.observe(r.key, start, inBytes, len(b))
	_, err := c.nc.Write(b)
	return err
}

// appendResponseHead appends a response frame's start: the size (0, filled
// in once the frame is complete), the correlation id and, for header v1,
// an empty tagged-field section.
func appendResponseHead(b []byte, correlationID int32, tagged bool) []byte {
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(correlationID))
	if tagged {
		b = append(b, 0)
	}
	return b
}

// skipTags skips a tagged-field section.
func skipTags(b []byte) ([]byte, error) {
	num, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[n:]
	for i := uint64(0); i < num; i++ {
		_, n = binary.Uvarint(b) // tag
		if n <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, errors.New("bad tag size")
		}
		b = b[n+int(size):]
	}
	return b, nil
}
