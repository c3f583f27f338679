//go:build linux || darwin

package daemon

import "net"

// peerCredFrom runs read on the connection's descriptor; the platforms differ only in the
// socket options read reads.
func peerCredFrom(c *net.UnixConn, read func(fd int) (uid, pid int, err error)) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	var rerr error
	if err := rc.Control(func(fd uintptr) { uid, pid, rerr = read(int(fd)) }); err != nil {
		return -1, 0, err
	}
	if rerr != nil {
		return -1, 0, rerr
	}
	return uid, pid, nil
}
