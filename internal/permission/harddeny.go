package permission

import (
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/coda-cli/coda/internal/shellparse"
)

// HardDeny reports whether the shell command cmd is catastrophic: deleting
// or rewriting the root file system or the home directory, formatting or
// overwriting disks, fork bombs, running code fetched from the network.
// Such commands are refused in every mode, whatever the rules say.
func HardDeny(cmd string) (reason string, denied bool) {
	home, _ := os.UserHomeDir()
	cmds, err := shellparse.Parse(cmd)
	if err != nil {
		return hardDenyText(cmd)
	}
	return hardDeny(cmds, "", home)
}

// hardDeny checks parsed commands; cwd is where the line starts ("" when
// unknown), home the user's home directory.
func hardDeny(cmds []shellparse.Command, cwd, home string) (string, bool) {
	if home == "" {
		home = "/home/user"
	}
	downloaded := map[string]bool{} // files a downloader wrote earlier in the line
	for _, c := range cmds {
		if c.Name == "cd" {
			cwd = changeDir(c, cwd, home)
			continue
		}
		if reason, ok := denyCommand(c, cwd, home); ok {
			return reason, true
		}
		if c.Opaque && fedByDownloader(cmds, c) {
			return "runs code downloaded from the network", true
		}
		if runsStdinProgram(c) && fedByDownloader(cmds, c) {
			return "pipes a download into an interpreter", true
		}
		if f, ok := runsFile(c); ok && downloaded[cleanAt(expandHome(f, home), cwd)] {
			return "runs a file downloaded earlier in the same command", true
		}
		if downloaders[c.Name] {
			for _, f := range downloadOutputs(c) {
				downloaded[cleanAt(expandHome(f, home), cwd)] = true
			}
		}
	}
	return "", false
}

// denyCommand checks one command on its own.
func denyCommand(c shellparse.Command, cwd, home string) (string, bool) {
	if c.Func != "" && c.Name == c.Func && (c.Piped || c.Background) {
		return "fork bomb: a function that spawns copies of itself", true
	}
	for _, r := range c.Redirects {
		if r.Writes() && !r.Dynamic && writesDevice(cleanAt(r.Target, cwd)) {
			return "writes onto a device: " + r.Target, true
		}
	}
	flags, operands := splitFlags(c.Args)
	switch name := c.Name; {
	case name == "rm":
		if hasFlag(flags, "--no-preserve-root", "") {
			return "rm --no-preserve-root", true
		}
		if hasFlag(flags, "--recursive", "rR") {
			for _, t := range operands {
				if what, ok := catastrophic(t, cwd, home); ok {
					return "recursive delete of " + what, true
				}
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		if len(operands) > 0 && !hasPrefixFlag(flags, "--reference") {
			operands = operands[1:] // the mode or owner
		}
		recursive := hasFlag(flags, "--recursive", "R")
		for _, t := range operands {
			if what, ok := catastrophic(t, cwd, home); ok && (recursive || what == "the root directory") {
				return name + " of " + what, true
			}
		}
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkdosfs" || name == "mkntfs" || name == "newfs":
		return "formats a file system (" + name + ")", true
	case name == "wipefs" || name == "blkdiscard" || name == "shred" || name == "mkswap" || name == "sfdisk" || name == "sgdisk" || name == "fdisk" || name == "parted":
		for _, t := range operands {
			if writesDevice(cleanAt(t, cwd)) {
				return name + " on a device: " + t, true
			}
		}
	case name == "dd":
		for _, a := range c.Args {
			if of, ok := strings.CutPrefix(a, "of="); ok && writesDevice(cleanAt(of, cwd)) {
				return "dd onto a device: " + of, true
			}
		}
	case name == "tee" || name == "cp" || name == "install" || name == "mv":
		for i, t := range operands {
			if (name == "tee" || i == len(operands)-1) && writesDevice(cleanAt(t, cwd)) {
				return name + " onto a device: " + t, true
			}
		}
		if name == "mv" {
			for _, t := range operands {
				if what, ok := catastrophic(t, cwd, home); ok {
					return "moves " + what, true
				}
			}
		}
	case name == "find":
		if reason, ok := findDeletes(c.Args, cwd, home); ok {
			return reason, true
		}
	case name == "kill":
		if killsEverything(c.Args) {
			return "kills every process (kill -1)", true
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		return "shuts the machine down", true
	case name == "init" || name == "telinit":
		if len(operands) > 0 && (operands[0] == "0" || operands[0] == "6") {
			return "shuts the machine down", true
		}
	case name == "systemctl":
		for _, o := range operands {
			switch o {
			case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate":
				return "shuts the machine down", true
			}
		}
	}
	if forkLoop(c) {
		return "fork bomb", true
	}
	return "", false
}

// splitFlags separates options from operands; "--" ends the options.
func splitFlags(args []string) (flags, operands []string) {
	for i, a := range args {
		if a == "--" {
			return flags, append(operands, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
		} else {
			operands = append(operands, a)
		}
	}
	return flags, operands
}

// hasFlag reports the long option or any of the short letters, in any
// spelling (-rf, -fr, -r -f, --recursive).
func hasFlag(flags []string, long, short string) bool {
	for _, f := range flags {
		if strings.HasPrefix(f, "--") {
			if long != "" && f == long {
				return true
			}
			continue
		}
		if short != "" && strings.ContainsAny(f[1:], short) {
			return true
		}
	}
	return false
}

func hasPrefixFlag(flags []string, long string) bool {
	for _, f := range flags {
		if strings.HasPrefix(f, long) {
			return true
		}
	}
	return false
}

// systemDirs are directories whose loss breaks the machine.
var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true,
	"/lib32": true, "/lib64": true, "/libx32": true, "/media": true, "/mnt": true, "/opt": true,
	"/proc": true, "/root": true, "/run": true, "/sbin": true, "/snap": true, "/srv": true,
	"/sys": true, "/usr": true, "/var": true, "/var/lib": true, "/Users": true, "/System": true,
	"/Applications": true, "/Library": true, "/private": true,
}

// catastrophic reports whether target (an argument as written) names the
// root, a system directory, a home directory or everything inside one.
func catastrophic(target, cwd, home string) (string, bool) {
	t := expandHome(target, home)
	t = expandTildeUser(t)
	for _, v := range []string{"$PWD", "${PWD}"} {
		if rest, ok := strings.CutPrefix(t, v); ok && cwd != "" && (rest == "" || rest[0] == '/') {
			t = cwd + rest
		}
	}
	if strings.ContainsAny(t, "$`") {
		return "", false // decided at run time: see riskyCommand
	}
	if !path.IsAbs(t) {
		if cwd == "" {
			return "", false
		}
		t = path.Join(cwd, t)
	}
	t = path.Clean(t)
	if what, ok := vitalDir(t, home); ok {
		return what, true
	}
	if base := path.Base(t); strings.ContainsAny(base, "*?[") {
		if what, ok := vitalDir(path.Dir(t), home); ok {
			return "everything in " + what, true
		}
	}
	return "", false
}

// vitalDir reports the root, system directories, home directories and the
// directories above the user's home.
func vitalDir(p, home string) (string, bool) {
	switch {
	case p == "/":
		return "the root directory", true
	case systemDirs[p] || path.Dir(p) == "/usr":
		return "system directory " + p, true
	case p == home || strings.HasPrefix(home, p+"/"):
		return "the home directory", true
	case path.Dir(p) == "/home" || path.Dir(p) == "/Users":
		return "home directory " + p, true
	}
	return "", false
}

// expandTildeUser turns ~name into that user's usual home directory.
func expandTildeUser(p string) string {
	if !strings.HasPrefix(p, "~") || len(p) < 2 || p[1] == '/' {
		return p
	}
	user, rest, _ := strings.Cut(p[1:], "/")
	if rest != "" {
		rest = "/" + rest
	}
	if user == "root" {
		return "/root" + rest
	}
	return "/home/" + user + rest
}

// cleanAt makes p absolute against cwd when possible.
func cleanAt(p, cwd string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	if cwd == "" {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// writesDevice reports a path whose writing damages a disk, memory or the
// kernel: anything under /dev but the harmless character devices.
func writesDevice(p string) bool {
	if p == "/proc/sysrq-trigger" {
		return true
	}
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
		"/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/ptmx", "/dev/console":
		return false
	}
	for _, dir := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/mqueue/"} {
		if strings.HasPrefix(p, dir) {
			return false
		}
	}
	return true
}

// changeDir follows cd for the commands after it; "" means unknown.
func changeDir(c shellparse.Command, cwd, home string) string {
	_, operands := splitFlags(c.Args)
	if len(operands) == 0 {
		return home
	}
	t := expandTildeUser(expandHome(operands[0], home))
	if c.Dynamic || t == "-" || strings.ContainsAny(t, "$`") {
		return ""
	}
	if path.IsAbs(t) {
		return path.Clean(t)
	}
	if cwd == "" {
		return ""
	}
	return path.Join(cwd, t)
}

// findDeletes reports find deleting from a vital directory.
func findDeletes(args []string, cwd, home string) (string, bool) {
	destructive := false
	for i, a := range args {
		switch a {
		case "-delete":
			destructive = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				switch path.Base(args[i+1]) {
				case "rm", "shred", "chmod", "chown", "mv", "dd", "truncate", "unlink":
					destructive = true
				}
			}
		}
	}
	if !destructive {
		return "", false
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if what, ok := catastrophic(a, cwd, home); ok {
			return "find deleting in " + what, true
		}
	}
	return "", false
}

// killsEverything reports kill with the pid -1 (every process).
func killsEverything(args []string) bool {
	i := 0
	if i < len(args) && (args[i] == "-s" || args[i] == "-n") {
		i += 2
	} else if i < len(args) && strings.HasPrefix(args[i], "-") {
		i++ // the signal (-9, -KILL, -1 is SIGHUP here) or "--"
	}
	for ; i < len(args); i++ {
		if args[i] == "-1" {
			return true
		}
	}
	return false
}

// forkLoopRe matches the classic one-line fork bombs of script languages.
var forkLoopRe = regexp.MustCompile(`fork\s*(\(\s*\))?\s*while\s*fork|while\s*(True|1)\s*:\s*os\.fork\(\)|while\s*\(?\s*(true|1)\s*\)?\s*\{?\s*fork\(\)`)

func forkLoop(c shellparse.Command) bool {
	for _, a := range c.Args {
		if forkLoopRe.MatchString(a) {
			return true
		}
	}
	return false
}

// textDenies catch catastrophic commands in lines the parser rejects.
var textDenies = []struct {
	re     *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`\brm\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:[^;&|]*\s)?(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?)(?:\s|$|[;&|)])`), "recursive delete of the root or home directory"},
	{regexp.MustCompile(`--no-preserve-root`), "rm --no-preserve-root"},
	{regexp.MustCompile(`\bmkfs(?:\.\w+)?\b`), "formats a file system"},
	{regexp.MustCompile(`\bdd\b[^;&|]*\bof=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|mapper|md|dm-|loop)`), "dd onto a device"},
	{regexp.MustCompile(`>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|mapper|md|dm-)`), "writes onto a device"},
	{regexp.MustCompile(`(\w+|:)\s*\(\)\s*\{[^}]*\b(\w+|:)\s*\|\s*(\w+|:)\s*&`), "fork bomb"},
	{regexp.MustCompile(`\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|z|da|k|mk)?sh\b`), "pipes a download into a shell"},
	{regexp.MustCompile(`\b(?:ba|z|da|k)?sh\s+<\(\s*(?:curl|wget)\b`), "runs code downloaded from the network"},
}

// hardDenyText is the last resort for lines that do not parse.
func hardDenyText(cmd string) (string, bool) {
	for _, d := range textDenies {
		if d.re.MatchString(cmd) {
			return d.reason, true
		}
	}
	return "", false
}
