package discovery

import (
	"os"
	"strconv"
	"strings"
)

// fingerprint summarises the files a pass reads (the state directory, whose mtime moves on
// every rename into it, the port file and the candidates' token files) so a change since a
// pass began can be noticed without waiting for fsnotify.
func fingerprint(r Resolved, cands []Candidate) string {
	return fingerprintPaths(r.StateDir, r.PortFile) + fingerprintTokens(r, cands)
}

func fingerprintTokens(r Resolved, cands []Candidate) string {
	paths := make([]string, 0, len(cands))
	for _, c := range cands {
		paths = append(paths, TokenFile(r.StateDir, c.Port))
	}
	return fingerprintPaths(paths...)
}

func fingerprintPaths(paths ...string) string {
	var sb strings.Builder
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			sb.WriteString("-|")
			continue
		}
		sb.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 36))
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatInt(fi.Size(), 36))
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatUint(uint64(fi.Mode()), 36))
		sb.WriteByte(':')
		sb.WriteString(inode(fi))
		sb.WriteByte('|')
	}
	return sb.String()
}
