package redis

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// respConn is a minimal RESP2 client for the differential test. A general client library
// would blur what the test must see exactly: a status "OK" and a bulk "OK" are different
// replies, and argv must reach the server byte for byte.
type respConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialRESP(addr string) (*respConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}, nil
}

func (rc *respConn) Close() error { return rc.c.Close() }

// send buffers one command; flush sends every buffered command (a pipeline).
func (rc *respConn) send(argv []string) {
	fmt.Fprintf(rc.w, "*%d\r\n", len(argv))
	for _, a := range argv {
		fmt.Fprintf(rc.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func (rc *respConn) flush() error {
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	return rc.w.Flush()
}

// read reads one reply; an array is read element by element into resp.ArrayReply's form.
func (rc *respConn) read() (resp.Reply, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return resp.Reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return resp.Reply{}, fmt.Errorf("bad RESP line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return resp.Reply{Kind: resp.ReplyStatus, Str: body}, nil
	case '-':
		return resp.Reply{Kind: resp.ReplyError, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return resp.IntReply(n), err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return resp.Reply{}, err
		}
		if n < 0 {
			return resp.Nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return resp.Reply{}, err
		}
		return resp.Reply{Kind: resp.ReplyBulk, Str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return resp.Reply{}, err
		}
		if n < 0 {
			return resp.Nil, nil
		}
		elems := make([]resp.Reply, n)
		for i := range elems {
			if elems[i], err = rc.read(); err != nil {
				return resp.Reply{}, err
			}
		}
		return resp.ArrayReply(elems...), nil
	}
	return resp.Reply{}, fmt.Errorf("unexpected RESP reply %q", line)
}

// do sends a pipeline and reads one reply per command.
func (rc *respConn) do(cmds [][]string) ([]resp.Reply, error) {
	for _, argv := range cmds {
		rc.send(argv)
	}
	if err := rc.flush(); err != nil {
		return nil, err
	}
	out := make([]resp.Reply, len(cmds))
	for i := range cmds {
		r, err := rc.read()
		if err != nil {
			return nil, fmt.Errorf("reply %d of %d: %w", i, len(cmds), err)
		}
		out[i] = r
	}
	return out, nil
}
