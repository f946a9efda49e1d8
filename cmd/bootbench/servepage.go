package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/bootbench/bootbench/adapters/benchpage"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/serialctl"
)

// pageFlags are serve's flags for the bench page.
type pageFlags struct {
	addr        *string
	allowRemote *bool
}

func addPageFlags(fs *command) pageFlags {
	return pageFlags{
		addr: fs.String("http", "", "serve the bench page, a read-only web page of every board's stage, console and results, at ADDR\n"+
			"(PORT, :PORT or HOST:PORT; without a host, "+benchpage.DefaultHost+": this host only)"),
		allowRemote: fs.Bool("http-allow-remote", false, "let --http listen where other hosts can reach the page (0.0.0.0, ::, a LAN address)"),
	}
}

// check refuses a page other hosts could reach unless that was asked
// for; it runs before serve starts anything.
func (f pageFlags) check() (addr string, err error) {
	if *f.addr == "" {
		if *f.allowRemote {
			return "", usageErr("serve: --http-allow-remote without --http: there is no page to allow")
		}
		return "", nil
	}
	addr, loopback, err := benchpage.ListenAddr(*f.addr)
	if err != nil {
		return "", usageErr("serve: --http %v", err)
	}
	if !loopback && !*f.allowRemote {
		return "", usageErr("serve: --http %s: other hosts could reach the bench page; add --http-allow-remote to mean it, or listen on 127.0.0.1", *f.addr)
	}
	return addr, nil
}

// benchPage is the running page: what it is fed, and its server.
type benchPage struct {
	page *benchpage.Page
	srv  *http.Server
}

// startPage serves the bench page at addr ("" for none) and says where.
func startPage(ctx context.Context, addr string, store *store.Store, served []harness.Served, show *serveDisplay) (*benchPage, error) {
	if addr == "" {
		return nil, nil
	}
	var boards []benchpage.Board
	for _, s := range served {
		boards = append(boards, benchpage.Board{Name: s.Board.Name, Profile: s.Board.Profile.Name})
	}
	page, err := benchpage.New(ctx, store, boards)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: the bench page: %w", err)
	}
	handler := page.Handler()
	if _, loopback, _ := benchpage.ListenAddr(addr); loopback {
		handler = benchpage.LoopbackHosts(handler)
	}
	p := &benchPage{page: page, srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}}
	go p.srv.Serve(ln)
	// The host as given (Go shows 0.0.0.0 as [::]), the port as bound
	// (port 0 picks one).
	host, _, _ := net.SplitHostPort(addr)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	where := net.JoinHostPort(host, port)
	if _, loopback, _ := benchpage.ListenAddr(addr); !loopback {
		show.note(fmt.Sprintf("warning: the bench page listens on %s: every host that reaches it sees the boards' consoles and results (read-only)", where))
	}
	show.note(fmt.Sprintf("bench page: http://%s/", where))
	return p, nil
}

// event, console and done feed the page what serve's log gets; a nil
// page takes nothing.
func (p *benchPage) event(e harness.Event) {
	if p != nil {
		p.page.Event(e)
	}
}

func (p *benchPage) done(rec *results.Run, err error) {
	if p != nil {
		p.page.Done(rec, err)
	}
}

// consoleTap is the page's tap on the consoles, nil without a page.
func (p *benchPage) consoleTap() func(string, serialctl.Line) {
	if p == nil {
		return nil
	}
	return p.page.Console
}

// close lets open pages receive what they were sent (the last result
// most of all), then stops the server.
func (p *benchPage) close() {
	if p == nil {
		return
	}
	p.page.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.srv.Shutdown(ctx) // waits for the streams to end, within ctx
	p.srv.Close()
}
