package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fileDiffOf(t *testing.T, r Result) FileDiff {
	t.Helper()
	d, ok := r.Display.(FileDiff)
	if !ok {
		t.Fatalf("display is %T, want FileDiff", r.Display)
	}
	return d
}

func TestWriteCreatesFileAndDirectories(t *testing.T) {
	env := ftEnv(t)
	r := ftRun(t, NewWrite(), env, map[string]any{"file_path": "a/b/new.txt", "content": "one\ntwo\n"})
	text := ftMustOK(t, r)
	path := filepath.Join(env.Cwd(), "a", "b", "new.txt")
	if !strings.Contains(text, "Created "+path) || !strings.Contains(text, "2 lines") {
		t.Errorf("result %q", text)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", info.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if string(data) != "one\ntwo\n" {
		t.Errorf("content %q", data)
	}
	d := fileDiffOf(t, r)
	if !d.Created || d.Added != 2 || d.Removed != 0 || d.Path != path {
		t.Errorf("diff %+v", d)
	}
	if !strings.Contains(d.Diff, "--- /dev/null\n+++ "+path+"\n@@ -0,0 +1,2 @@\n+one\n+two\n") {
		t.Errorf("diff text %q", d.Diff)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries", len(entries))
	}
}

func TestWriteExistingFileNeedsFreshRead(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "run.sh", "#!/bin/sh\necho old\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	write := map[string]any{"file_path": path, "content": "#!/bin/sh\necho new\n"}
	ftMustFail(t, ftRun(t, NewWrite(), env, write), "has not been read", "Read")

	ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	// Someone else changes the file after the read.
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho changed by the user\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	os.Chtimes(path, future, future)
	ftMustFail(t, ftRun(t, NewWrite(), env, write), "modified since")

	ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	r := ftRun(t, NewWrite(), env, write)
	if text := ftMustOK(t, r); !strings.Contains(text, "Updated "+path) {
		t.Errorf("result %q", text)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v not kept", info.Mode().Perm())
	}
	d := fileDiffOf(t, r)
	if d.Created || d.Added != 1 || d.Removed != 1 || !strings.Contains(d.Diff, "-echo changed by the user\n+echo new\n") {
		t.Errorf("diff %+v", d)
	}
	// The write counts as seen: a second write needs no Read.
	ftMustOK(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": path, "content": "again\n"}))
}

func TestWriteAfterTouchWithSameContent(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "f.txt", "same\n")
	ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	future := time.Now().Add(time.Minute)
	os.Chtimes(path, future, future) // touched, not changed
	ftMustOK(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": path, "content": "new\n"}))
}

func TestWriteThroughSymlinkKeepsLink(t *testing.T) {
	env := ftEnv(t)
	target := ftFile(t, env, "target.txt", "old\n")
	link := filepath.Join(env.Cwd(), "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": link}))
	ftMustOK(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": link, "content": "new\n"}))
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if data, _ := os.ReadFile(target); string(data) != "new\n" {
		t.Errorf("target = %q", data)
	}
}

func TestWriteRefusesDirectory(t *testing.T) {
	env := ftEnv(t)
	ftMustFail(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": env.Cwd(), "content": "x"}), "directory")
	ftMustFail(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": "x.txt"}), `"content"`)
}
