package plugin

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// The JSON-RPC library reads each websocket message whole into memory, with no bound of its
// own: a connection's messages are bounded here instead, on the hijacked connection, by the
// same per-permission limit as request bodies. A message over it closes the connection.

// wsLimitWriter is a ResponseWriter whose Hijack hands the websocket library a connection that
// counts each incoming message's payload.
type wsLimitWriter struct {
	http.ResponseWriter
	limit   int64
	setting string
	remote  string
}

// Hijack implements http.Hijacker.
func (w *wsLimitWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("plugin: the response writer cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// Bytes the server read ahead belong to the stream and go through the count too.
	src := conn
	if n := brw.Reader.Buffered(); n > 0 {
		ahead, _ := brw.Reader.Peek(n)
		src = &prefixedConn{Conn: conn, ahead: append([]byte(nil), ahead...)}
	}
	lc := &wsLimitConn{Conn: src, frames: wsFrames{limit: w.limit}, setting: w.setting, remote: w.remote}
	return lc, bufio.NewReadWriter(bufio.NewReader(lc), brw.Writer), nil
}

// Unwrap returns the underlying ResponseWriter.
func (w *wsLimitWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// prefixedConn reads ahead's bytes before the connection's.
type prefixedConn struct {
	net.Conn
	ahead []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// wsLimitConn fails reads, and closes itself, once a message goes over the limit.
type wsLimitConn struct {
	net.Conn
	frames  wsFrames
	setting string
	remote  string
	err     error
}

func (c *wsLimitConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if ferr := c.frames.feed(p[:n]); ferr != nil {
		c.err = fmt.Errorf("%w (%s)", ferr, c.setting)
		log.Warnw("closed a websocket connection: message over the limit", "max", c.frames.limit, "setting", c.setting, "remote", c.remote)
		_ = c.Conn.Close()
		return 0, c.err
	}
	return n, err
}

// errWSMessageTooLarge reports a websocket message over the connection's limit.
var errWSMessageTooLarge = errors.New("websocket message over the size limit")

// wsFrames follows the client-to-server frame stream (RFC 6455 §5.2) and sums the payload of
// the message being received; control frames (opcode ≥ 8) are not part of it.
type wsFrames struct {
	limit int64

	head    [14]byte // the frame header read so far
	headN   int
	payload uint64 // payload bytes of the current frame still to come
	message int64  // payload of the current message so far
}

// feed consumes stream bytes and returns errWSMessageTooLarge once the current message's
// payload exceeds the limit, or an error for a malformed header.
func (f *wsFrames) feed(b []byte) error {
	for len(b) > 0 {
		if f.payload > 0 {
			n := uint64(len(b))
			if n > f.payload {
				n = f.payload
			}
			f.payload -= n
			b = b[n:]
			continue
		}
		f.head[f.headN] = b[0]
		f.headN++
		b = b[1:]
		if f.headN < 2 {
			continue
		}
		need := 2
		switch f.head[1] & 0x7f {
		case 126:
			need += 2
		case 127:
			need += 8
		}
		if f.head[1]&0x80 != 0 {
			need += 4 // the masking key
		}
		if f.headN < need {
			continue
		}
		var n uint64
		switch l := f.head[1] & 0x7f; l {
		case 126:
			n = uint64(binary.BigEndian.Uint16(f.head[2:4]))
		case 127:
			n = binary.BigEndian.Uint64(f.head[2:10])
			if n>>63 != 0 {
				return errors.New("malformed websocket frame length")
			}
		default:
			n = uint64(l)
		}
		if opcode := f.head[0] & 0x0f; opcode < 8 { // a data frame (8 and up are control frames)
			if opcode != 0 { // a new message (text or binary); 0 continues the current one
				f.message = 0
			}
			if n > uint64(f.limit) || f.message+int64(n) > f.limit {
				return errWSMessageTooLarge
			}
			f.message += int64(n)
		}
		f.payload, f.headN = n, 0
	}
	return nil
}
