package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Text is one piece of a test's evidence (a process's output, a log, a file), named for the
// failure message.
type Text struct{ Name, Body string }

// maxEvidenceFile skips files too large to be anything resmongw wrote.
const maxEvidenceFile = 64 << 20

// FilesUnder is every regular file under root, named by its path.
func FilesUnder(root string) []Text {
	var out []Text
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Size() < maxEvidenceFile {
			if b, err := os.ReadFile(p); err == nil {
				out = append(out, Text{Name: p, Body: string(b)})
			}
		}
		return nil
	})
	return out
}

// minToken is shorter than any real token; a shorter one would match by accident, so it
// means the test collected the wrong thing.
const minToken = 16

// PlausibleToken fails a token too short to be real (so a search for it proves nothing); the
// error does not quote it.
func PlausibleToken(tok string) error {
	if len(tok) < minToken {
		return fmt.Errorf("implausible token of %d bytes", len(tok))
	}
	return nil
}

// TokenLeaks names the texts that contain any of tokens, in order. Neither its answer nor its
// error ever quotes a token.
func TokenLeaks(tokens []string, texts ...Text) ([]string, error) {
	for _, tok := range tokens {
		if err := PlausibleToken(tok); err != nil {
			return nil, err
		}
	}
	var leaks []string
	for _, t := range texts {
		for _, tok := range tokens {
			if strings.Contains(t.Body, tok) {
				leaks = append(leaks, t.Name)
				break
			}
		}
	}
	return leaks, nil
}
