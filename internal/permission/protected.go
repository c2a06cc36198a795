package permission

import (
	"path/filepath"
	"strings"
)

// Protected paths are never written without asking, whatever the mode or
// the rules: files that would let a write turn into code running later
// outside the user's view (git hooks and config, coda's own settings,
// hooks, skills, agents and commands, MCP server lists, shell startup
// files, SSH config).
//
// Names are compared without regard to case. On Linux `.Git/hooks` is a
// different directory from `.git/hooks` and git never runs it, but on a
// case-insensitive file system (macOS, or a mounted one) it is the same
// directory; asking for both costs one prompt and closes the gap.

// codaProtected are the children of a .coda directory that are protected.
var codaProtected = []string{"settings.json", "settings.local.json", "hooks", "skills", "agents", "commands"}

// homeProtected are paths under the home directory that are protected.
var homeProtected = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
	".config/fish", ".inputrc", ".xprofile", ".xinitrc",
	".gitconfig", ".config/git", ".ssh", ".config/autostart",
}

// isProtected reports whether writing p is protected.
func isProtected(p, home string) bool {
	slash := filepath.ToSlash(p)
	parts := strings.Split(slash, "/")
	for i, part := range parts {
		switch {
		case strings.EqualFold(part, ".git"):
			return true
		case strings.EqualFold(part, ".coda") && i+1 < len(parts):
			for _, c := range codaProtected {
				if strings.EqualFold(parts[i+1], c) {
					return true
				}
			}
		case strings.EqualFold(part, ".mcp.json") && i == len(parts)-1:
			return true
		}
	}
	if strings.HasPrefix(strings.ToLower(slash), "/etc/coda/") {
		return true
	}
	if home != "" && within(home, p) {
		rel, _ := filepath.Rel(home, p)
		rel = strings.ToLower(filepath.ToSlash(rel))
		for _, h := range homeProtected {
			if rel == h || strings.HasPrefix(rel, h+"/") {
				return true
			}
		}
	}
	return false
}

// ProtectedPaths lists the protected files and directories of a project
// and a home directory, for the OS sandbox to mount read-only. Paths that
// do not exist are included; the sandbox skips them.
func ProtectedPaths(projectDir, home string) []string {
	var out []string
	if projectDir != "" {
		out = append(out,
			filepath.Join(projectDir, ".git", "hooks"),
			filepath.Join(projectDir, ".git", "config"),
			filepath.Join(projectDir, ".mcp.json"))
		for _, c := range codaProtected {
			out = append(out, filepath.Join(projectDir, ".coda", c))
		}
	}
	if home != "" {
		for _, c := range codaProtected {
			out = append(out, filepath.Join(home, ".coda", c))
		}
		for _, h := range homeProtected {
			out = append(out, filepath.Join(home, filepath.FromSlash(h)))
		}
	}
	return out
}
