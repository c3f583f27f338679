package bench

import (
	"net"
	"os"
	"runtime"
	"testing"
)

func TestProcReadersOnThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pid := os.Getpid()
	if cpu, err := SchedCPU(pid); err != nil || cpu <= 0 {
		t.Fatalf("SchedCPU = %v, %v", cpu, err)
	}
	m, err := ReadMem(pid)
	if err != nil || m.RSS <= 0 || m.Private <= 0 || m.Private > m.RSS {
		t.Fatalf("ReadMem = %+v, %v", m, err)
	}
}

func TestBackendConnsSeesANewConnection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	before, err := BackendConns(os.Getpid(), port)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	after, err := BackendConns(os.Getpid(), port)
	if err != nil {
		t.Fatal(err)
	}
	if n := newIn(before, after); n != 1 {
		t.Fatalf("%d new connections to port %d seen, want 1 (before %v, after %v)", n, port, before, after)
	}
}
