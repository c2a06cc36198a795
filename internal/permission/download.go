package permission

import (
	"strings"

	"github.com/coda-cli/coda/internal/shellparse"
)

// downloaders fetch data from the network to standard output or a file.
var downloaders = map[string]bool{
	"curl": true, "wget": true, "fetch": true, "http": true, "https": true, "xh": true,
	"httpie": true, "lwp-request": true, "GET": true, "lynx": true, "links": true, "w3m": true,
	"aria2c": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true,
}

// fedByDownloader reports whether a downloader's output reaches c.
func fedByDownloader(cmds []shellparse.Command, c shellparse.Command) bool {
	for _, i := range c.Feeds {
		if i >= 0 && i < len(cmds) && downloaders[cmds[i].Name] {
			return true
		}
	}
	return false
}

// interpreters run a program read from standard input when given none.
var interpreters = map[string]string{
	// name: the options that give the program inline instead
	"python": "cm", "python2": "cm", "python3": "cm", "perl": "eE", "ruby": "e", "node": "ep",
	"nodejs": "ep", "php": "rR", "lua": "e", "deno": "", "bun": "e", "Rscript": "e", "tclsh": "",
	"sh": "c", "bash": "c", "zsh": "c", "dash": "c", "ksh": "c", "mksh": "c", "ash": "c", "fish": "c",
}

// runsStdinProgram reports an interpreter reading its program from
// standard input or from a substitution.
func runsStdinProgram(c shellparse.Command) bool {
	inline, ok := interpreters[c.Name]
	if !ok && !strings.HasPrefix(c.Name, "python3.") {
		return false
	}
	if !ok {
		inline = "cm"
	}
	for _, a := range c.Args {
		if a == "-" || a == "/dev/stdin" || strings.HasPrefix(a, "<(") {
			return true
		}
		if strings.HasPrefix(a, "--") {
			if a == "--eval" || a == "--print" || a == "--command" {
				return false
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			if inline != "" && strings.ContainsAny(a[1:], inline) {
				return false
			}
			continue
		}
		return false // a script file
	}
	return true
}

// runsFile returns the file a command executes: ./script, sh script,
// source script.
func runsFile(c shellparse.Command) (string, bool) {
	if strings.Contains(c.Program, "/") {
		return c.Program, true
	}
	if _, ok := interpreters[c.Name]; ok || c.Name == "source" || c.Name == "." {
		for _, a := range c.Args {
			if !strings.HasPrefix(a, "-") {
				return a, true
			}
		}
	}
	return "", false
}

// downloadOutputs lists the files a downloader writes (curl -o, wget -O,
// a redirection).
func downloadOutputs(c shellparse.Command) []string {
	var out []string
	letter := map[string]byte{"curl": 'o', "wget": 'O'}[c.Name]
	for i, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--output-document=") || strings.HasPrefix(a, "--output="):
			_, v, _ := strings.Cut(a, "=")
			out = append(out, v)
		case a == "--output" || a == "--output-document":
			if i+1 < len(c.Args) {
				out = append(out, c.Args[i+1])
			}
		case letter != 0 && len(a) > 1 && a[0] == '-' && a[1] != '-':
			j := strings.IndexByte(a, letter)
			switch {
			case j < 0:
			case j < len(a)-1:
				out = append(out, a[j+1:])
			case i+1 < len(c.Args):
				out = append(out, c.Args[i+1])
			}
		}
	}
	for _, r := range c.Redirects {
		if r.Writes() && !r.Dynamic {
			out = append(out, r.Target)
		}
	}
	return out
}
