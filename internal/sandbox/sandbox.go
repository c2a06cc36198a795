// Package sandbox runs shell commands under bubblewrap (bwrap): the file
// system read-only except the project, the additional directories and a
// private /tmp; protected files read-only even inside the project; the
// user's secrets (~/.ssh, cloud credentials...) hidden; its own PID
// namespace; and no network unless allowed.
//
// The sandbox ends with its parent: the caller starts the wrapped command
// in its own process group (Setpgid) and kills the group to stop it. bwrap
// is that group's leader; it runs the command as PID 1 of a new PID
// namespace with --die-with-parent, so killing bwrap kills the namespace
// and every process in it, even those that left the process group
// (--new-session puts the command in a session of its own, which keeps it
// from pushing keystrokes into coda's terminal).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options says what a sandboxed command may touch.
type Options struct {
	ProjectDir   string   // writable
	WritableDirs []string // also writable: additional directories, build caches
	Home         string   // the user's home; its secrets are hidden
	Protected    []string // read-only even inside a writable directory; missing paths are skipped
	Network      bool     // allow network access (otherwise only a private loopback)
}

// homeSecrets are the paths under the home directory a sandboxed command
// cannot see: credentials and keys.
var homeSecrets = []string{
	".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker", ".netrc",
	".azure", ".config/gh", ".git-credentials", ".npmrc", ".pypirc", ".cargo/credentials",
	".cargo/credentials.toml", ".config/hub", ".password-store", ".local/share/keyrings",
	".vault-token", ".terraform.d/credentials.tfrc.json", ".config/op", ".pgpass", ".my.cnf",
	".coda/credentials.json",
}

// hostSockets are daemon sockets a sandboxed command must not reach: a
// read-only mount does not stop connect(2), and these daemons act for the
// user outside the sandbox.
var hostSockets = []string{
	"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock",
	"/run/containerd/containerd.sock", "/var/run/dbus/system_bus_socket", "/run/dbus/system_bus_socket",
}

// Wrap returns the command line that runs argv inside the sandbox.
func Wrap(opts Options, argv []string) []string {
	args := []string{"bwrap",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session",
		"--setenv", "TMPDIR", "/tmp",
	}
	if !opts.Network {
		args = append(args, "--unshare-net")
	}
	var writable []string
	for _, d := range append([]string{opts.ProjectDir}, opts.WritableDirs...) {
		if d != "" && !contains(writable, filepath.Clean(d)) {
			writable = append(writable, filepath.Clean(d))
		}
	}
	for _, d := range writable {
		args = append(args, "--bind", d, d)
	}
	for _, p := range opts.Protected {
		if _, err := os.Lstat(p); err == nil {
			args = append(args, "--ro-bind", p, p)
		}
	}
	// Hidden last, so that a secret inside a writable directory stays
	// hidden.
	var hidden []string
	if opts.Home != "" {
		for _, s := range homeSecrets {
			hidden = append(hidden, filepath.Join(opts.Home, filepath.FromSlash(s)))
		}
	}
	hidden = append(hidden, hostSockets...)
	hidden = append(hidden, filepath.Join("/run/user", strconv.Itoa(os.Getuid())))
	for _, p := range hidden {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", p, "--remount-ro", p)
		default:
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	args = append(args, "--")
	return append(args, argv...)
}

// probeTimeout bounds the probe: a bwrap that hangs is a bwrap that
// does not work.
const probeTimeout = 10 * time.Second

// Probe runs `true` in the sandbox once and reports why bwrap cannot be
// used here (not installed, user namespaces disabled, seccomp...), or nil.
// Callers probe once at start and, on error, tell the user once and ask
// for shell commands instead.
func Probe(ctx context.Context) error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return fmt.Errorf("sandbox unavailable: bwrap not found (install bubblewrap): %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "coda-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	argv := Wrap(Options{ProjectDir: dir}, []string{"true"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = "timed out"
		}
		return fmt.Errorf("sandbox unavailable: bwrap cannot start here: %w: %s", err, msg)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
