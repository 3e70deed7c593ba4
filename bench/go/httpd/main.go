// httpd - the Go side of the HTTP benchmark (bench/httpd.py): net/http serving
// the same two handlers as examples/httpd.c, standard library only.
//
// Usage: wsrhttpd-go [-port N] [-rounds N] [-file PATH]; GOMAXPROCS sets the Ps.
//
//	/      "Hello, World!\n"
//	/work  one pread(2) of the first 4 KiB of FILE (os.File.ReadAt: a blocking
//	       system call, entersyscall/exitsyscall), then ROUNDS rounds of the
//	       multiply-xor hash of examples/httpd.c; body "work=<16 hex digits>\n"
//
// GET and HEAD only (405 otherwise); any other path is 404. MaxHeaderBytes is
// examples/httpd.c's MAX_HEADER (Go adds 4 KiB of slack to it).
//
// Invariants: prints "listening on 127.0.0.1:PORT" once the listener is open;
// on SIGINT or SIGTERM it calls http.Server.Shutdown (closes the listener and
// the idle connections, waits for the busy ones), prints "requests = N" and
// exits 0. Concurrency: net/http runs one goroutine per connection; the
// request counter is the only state they share.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
)

const workBytes = 4096

var hello = []byte("Hello, World!\n")

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: a free one)")
	rounds := flag.Int64("rounds", 5000, "hash rounds per /work request")
	file := flag.String("file", "", "file whose first 4 KiB /work reads (default: this executable)")
	flag.Parse()
	if flag.NArg() != 0 || *port < 0 || *port > 65535 || *rounds < 0 {
		fmt.Fprintln(os.Stderr, "usage: wsrhttpd-go [-port N] [-rounds N] [-file PATH]")
		os.Exit(2)
	}
	if *file == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "wsrhttpd-go:", err)
			os.Exit(1)
		}
		*file = exe
	}
	f, err := os.Open(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsrhttpd-go:", err)
		os.Exit(1)
	}
	var requests atomic.Int64
	check := func(w http.ResponseWriter, r *http.Request) bool {
		requests.Add(1)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !check(w, r) {
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(hello)
	})
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		if !check(w, r) {
			return
		}
		var buf [workBytes]byte
		n, err := f.ReadAt(buf[:], 0)
		if n <= 0 {
			fmt.Fprintln(os.Stderr, "wsrhttpd-go: read:", err)
			http.Error(w, "", http.StatusInternalServerError)
			return
		}
		h := uint64(14695981039346656037) // FNV-1a offset basis and prime
		j := 0
		for i := int64(0); i < *rounds; i++ {
			h = (h ^ uint64(buf[j])) * 1099511628211
			if j++; j == n {
				j = 0
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "work=%016x\n", h)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsrhttpd-go:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux, MaxHeaderBytes: 8192}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening on 127.0.0.1:%d\n", ln.Addr().(*net.TCPAddr).Port)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-sig:
		if err := srv.Shutdown(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "wsrhttpd-go: shutdown:", err)
			os.Exit(1)
		}
	case err := <-served:
		fmt.Fprintln(os.Stderr, "wsrhttpd-go: serve:", err)
		os.Exit(1)
	}
	fmt.Printf("requests = %d\n", requests.Load())
}
