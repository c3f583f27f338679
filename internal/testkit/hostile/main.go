// Command hostile is the attacker of the e2e security tests: a loopback HTTP listener, run
// as another user, that answers like a resmon backend and reports every connection and
// request it gets on stdout ("conn", "request <method> <path> auth=<bool>"), so a test can
// count what reached it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

var mu sync.Mutex

func say(format string, a ...any) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", a...)
}

func main() {
	port := flag.Int("port", 0, "port to bind on 127.0.0.1 (0: any)")
	flag.Parse()
	var ln net.Listener
	var err error
	// The port was a crashed backend's a moment ago; the kernel may take a moment to free it.
	for i := 0; i < 200; i++ {
		if ln, err = net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(*port)); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	say("listening %d", ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}

const health = `{"status":"ok","version":"2.3.0","identity":{"contract_version":1,` +
	`"runtime_id":"66666666-6666-4666-8666-666666666666","schema_version":null,"corpus_id":null,"build_id":null}}`

func serve(c net.Conn) {
	defer c.Close()
	say("conn")
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		say("request %s %s auth=%v", req.Method, req.URL.Path, req.Header.Get("Authorization") != "")
		body := `{"ok":true}`
		if req.URL.Path == "/api/health" {
			body = health
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}
