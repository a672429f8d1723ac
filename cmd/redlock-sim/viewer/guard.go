package viewer

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// contentSecurityPolicy lets the page load only its own script and style, from this
// server, and fetch only from it; no inline script or style attribute, no plugin, no
// frame around it.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// guard is who the viewer answers: requests that name this server in their Host header
// (a page of another site that a DNS trick points at 127.0.0.1 names its own host) and,
// for the costly ones, come from the viewer's own page or from no page at all.
type guard struct {
	hosts map[string]bool // lower-case host names and addresses, IPv6 without brackets
	port  string          // the port a Host header must carry; any when ""
}

func newGuard(o Options) (*guard, error) {
	g := &guard{hosts: map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true}}
	names := slices.Clone(o.Hosts)
	if o.Addr != "" {
		host, port, err := net.SplitHostPort(o.Addr)
		if err != nil {
			return nil, fmt.Errorf("viewer options: Addr %q: want HOST:PORT: %v", o.Addr, err)
		}
		g.port = port
		names = append(names, host)
	}
	for _, h := range names {
		h = strings.ToLower(strings.Trim(h, "[]"))
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
			continue // 0.0.0.0 is no name a browser sends; the machine's addresses are in Hosts
		}
		g.hosts[h] = true
	}
	return g, nil
}

// hostOK reports whether hostport (a Host header, or an Origin's host) names this server.
func (g *guard) hostOK(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil { // no port: only right for a server on port 80
		host, port = hostport, "80"
	}
	if g.port != "" && port != g.port {
		return false
	}
	return g.hosts[strings.ToLower(strings.Trim(host, "[]"))]
}

// names lists the host:port forms the server answers for, for a refusal's message.
func (g *guard) names() string {
	var out []string
	for h := range g.hosts {
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		if g.port != "" {
			h += ":" + g.port
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// checkHost refuses a request whose Host header names another server.
func (g *guard) checkHost(r *http.Request) error {
	if g.hostOK(r.Host) {
		return nil
	}
	return fmt.Errorf("the Host header %q names another server: the viewer answers only requests for %s "+
		"(a page of another site must not reach it through its own name)", r.Host, g.names())
}

// checkOrigin refuses a costly request sent by a page of another origin: its Origin
// header names another server, or its Sec-Fetch-Site says another site sent it. A
// request without either (curl, a link typed or clicked) is the user's own.
func (g *guard) checkOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Scheme != "http" || u.Opaque != "" || u.User != nil || strings.Trim(u.Path, "/") != "" || !g.hostOK(u.Host) {
			return fmt.Errorf("the Origin header %q is not this viewer's page: only the viewer's own page (or a request from no page, such as curl) may run simulations here", o)
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "cross-site", "same-site":
		return fmt.Errorf("the Sec-Fetch-Site header says %q: only the viewer's own page (or a request from no page, such as curl) may run simulations here", site)
	}
	return nil
}

// setHeaders sets the headers every answer carries: the content security policy, no
// framing, no referrer, no content sniffing, no use from other origins' pages.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
