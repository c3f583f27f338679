package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
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

// writeFileAtomic replaces path with data through a temp file and rename, so a crash
// never leaves a harness with half a config. Missing parent directories are created 0700.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
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
	return os.Rename(tmp.Name(), path)
}
