//go:build !unix

package search

import "os"

type rawFile = os.File

func openFile(path string) (f *rawFile, size int64, isDir bool, err error) {
	f, err = os.Open(path)
	if err != nil {
		return nil, 0, false, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, false, err
	}
	return f, info.Size(), info.IsDir(), nil
}
