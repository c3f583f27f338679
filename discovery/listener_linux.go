package discovery

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// verifyPeerOwner finds the kernel's record of the server side of c (local address = c's
// remote, remote address = c's local) and checks the uid it carries: a socket accepted by a
// listener inherits that listener's owner.
func verifyPeerOwner(c net.Conn) error {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return checkOwner(c, 0, false, "not a TCP connection")
	}
	uid, err := sockDiagUID(remote, local)
	if err == nil {
		return checkOwner(c, uid, true, "")
	}
	if errors.Is(err, errServerClosed) {
		return checkOwner(c, 0, false, err.Error())
	}
	// NETLINK_SOCK_DIAG can be unavailable (a seccomp profile, an old kernel module set);
	// /proc/net/tcp{,6} carries the same uid column.
	uid, perr := procNetUID(remote, local)
	if perr == nil {
		return checkOwner(c, uid, true, "")
	}
	return checkOwner(c, 0, false, fmt.Sprintf("sock_diag: %v; /proc/net: %v", err, perr))
}

var (
	errNoSocket     = errors.New("no such socket")
	errServerClosed = errors.New("the server side of the connection is closed already")
)

const (
	tcpTimeWait     = 6 // TCP_TIME_WAIT in the kernel's state numbering
	procTCPTimeWait = "06"
)

// sockDiagUID asks inet_diag for the one TCP socket whose local address is src and remote
// address dst (an exact lookup, not a dump) and returns its owner's uid.
func sockDiagUID(src, dst *net.TCPAddr) (int, error) {
	family := uint8(unix.AF_INET)
	if src.IP.To4() == nil {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	// struct nlmsghdr (16) + struct inet_diag_req_v2 (56).
	const reqLen = 16 + 56
	req := make([]byte, reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], reqLen)
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // seq
	b := req[16:]
	b[0] = family
	b[1] = unix.IPPROTO_TCP
	ne.PutUint32(b[4:], 0xffffffff) // every state
	id := b[8:]                     // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(src.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(dst.Port))
	putAddr(id[4:20], src.IP, family)
	putAddr(id[20:36], dst.IP, family)
	ne.PutUint32(id[40:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], 0xffffffff)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if code := int32(ne.Uint32(m.Data[:4])); code != 0 {
						if unix.Errno(-code) == unix.ENOENT {
							return 0, errNoSocket
						}
						return 0, unix.Errno(-code)
					}
				}
				return 0, errNoSocket
			case unix.NLMSG_DONE:
				return 0, errNoSocket
			case unix.SOCK_DIAG_BY_FAMILY:
				// struct inet_diag_msg: family, state, timer, retrans (4), sockid (48),
				// expires, rqueue, wqueue (12), uid, inode.
				if len(m.Data) < 72 {
					return 0, errors.New("short inet_diag answer")
				}
				if m.Data[1] == tcpTimeWait {
					// A time-wait record carries no owner (it reads as uid 0): the server
					// side is gone already, and nothing is to be sent to it anyway.
					return 0, errServerClosed
				}
				return int(ne.Uint32(m.Data[64:68])), nil
			}
		}
	}
}

func putAddr(dst []byte, ip net.IP, family uint8) {
	if family == unix.AF_INET {
		copy(dst, ip.To4())
		return
	}
	copy(dst, ip.To16())
}

// procNetUID finds the same socket in /proc/net/tcp or tcp6 and returns its uid column.
func procNetUID(src, dst *net.TCPAddr) (int, error) {
	file, want := "/proc/net/tcp", procAddr(src)+" "+procAddr(dst)
	if src.IP.To4() == nil {
		file = "/proc/net/tcp6"
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid …
		if len(fields) < 8 || fields[1]+" "+fields[2] != want {
			continue
		}
		if fields[3] == procTCPTimeWait {
			return 0, errServerClosed
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return 0, fmt.Errorf("bad uid column %q", fields[7])
		}
		return uid, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errNoSocket
}

// procAddr is an address as /proc/net/tcp{,6} writes it: the address's 32-bit words in host
// order as hex, then the port.
func procAddr(a *net.TCPAddr) string {
	var sb strings.Builder
	ip := a.IP.To4()
	if ip == nil {
		ip = a.IP.To16()
	}
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&sb, "%08X", binary.NativeEndian.Uint32(ip[i:i+4]))
	}
	fmt.Fprintf(&sb, ":%04X", a.Port)
	return sb.String()
}
