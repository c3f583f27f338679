package packaging

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/trustfile"
)

// now is time.Now; tests pin it to make backup names predictable.
var now = time.Now

// backupFile copies the current content of path to <path>.bak-<timestamp> (0600: the
// file may hold other servers' secrets) and returns the backup's path.
func backupFile(path string, content []byte) (string, error) {
	base := path + ".bak-" + now().Format("20060102-150405")
	bak := base
	for i := 1; ; i++ {
		f, err := os.OpenFile(bak, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			bak = fmt.Sprintf("%s.%d", base, i)
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(content); err != nil {
			f.Close()
			return "", err
		}
		return bak, f.Close()
	}
}

// beforeReplace runs just before the last check of a file about to be replaced; tests use
// it to change the file at that moment.
var beforeReplace = func(path string) {}

// maxConfigFile bounds what a config writer reads (a long-used ~/.claude.json is a few MB).
const maxConfigFile = 64 << 20

// readOwned reads a config file that must be a regular file of ours nobody else can write
// (trustfile.Check), opened without following a link and without blocking on a FIFO; the
// directories above it have passed trustfile.ResolveForWrite. It returns the content and the
// file's permission bits.
func readOwned(path string) ([]byte, fs.FileMode, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, 0, fmt.Errorf("refusing to read %s: it became a symbolic link", path)
		}
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("refusing to read %s: it is not a regular file", path)
	}
	if err := trustfile.Check(path, fi, false); err != nil {
		return nil, 0, fmt.Errorf("refusing to write %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) > maxConfigFile {
		return nil, 0, fmt.Errorf("%s is larger than %d MiB; resmongw does not edit it", path, maxConfigFile>>20)
	}
	return b, fi.Mode().Perm(), nil
}

// writeFileAtomic replaces path with data through a temp file and rename, so a crash
// never leaves a harness with half a config. Missing parent directories are created 0700
// when mkdirs. unchanged runs last before the rename: an error from it leaves path as it is.
func writeFileAtomic(path string, data []byte, mode os.FileMode, mkdirs bool, unchanged func() error) error {
	dir := filepath.Dir(path)
	if mkdirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	beforeReplace(path)
	if err := unchanged(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
