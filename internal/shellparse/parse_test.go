package shellparse

import (
	"slices"
	"strings"
	"testing"
)

// lines renders each command as "Name arg arg" for compact comparison.
func lines(cmds []Command) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " "))
	}
	return out
}

func mustParse(t *testing.T, src string) []Command {
	t.Helper()
	cmds, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return cmds
}

func TestParseFindsEverySimpleCommand(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"git status", []string{"git status"}},
		{"ls -la | grep x && echo ok || echo no; pwd & wait", []string{"ls -la", "grep x", "echo ok", "echo no", "pwd", "wait"}},
		{"(cd src && make) ; { make test; }", []string{"cd src", "make", "make test"}},
		{"echo $(date) `whoami`", []string{"date", "whoami", "echo $(date) $(whoami)"}},
		{"diff <(ls a) <(ls b)", []string{"ls a", "ls b", "diff <(ls a) <(ls b)"}},
		{"if test -f x; then cat x; elif true; then :; else rm x; fi", []string{"test -f x", "cat x", "true", ":", "rm x"}},
		{"for f in $(ls); do rm $f; done", []string{"ls", "rm $f"}},
		{"while read l; do echo $l; done < f", []string{"read l", "echo $l", ""}},
		{"case $x in a) echo a;; *) echo b;; esac", []string{"echo a", "echo b"}},
		{"f() { rm -rf build; }; f", []string{"rm -rf build", "f"}},
		{"X=$(id -u) make", []string{"id -u", "make"}},
		{"export A=$(hostname)", []string{"hostname", "export A=$(hostname)"}},
		{"[[ $(uname) == Linux ]] && echo y", []string{"uname", "[[", "echo y"}},
		{"bash -c 'rm -rf build; ls'", []string{"bash -c rm -rf build; ls", "rm -rf build", "ls"}},
		{`sh -c "echo \$(id)"`, []string{"sh -c echo $(id)", "id", "echo $(id)"}},
		{"eval 'ls -l' x", []string{"eval ls -l x", "ls -l x"}},
		{"su -c 'make install'", []string{"su -c make install", "make install"}},
		{"find . -name '*.o' -exec rm {} \\;", []string{"find . -name *.o -exec rm {} ;", "rm {}"}},
		{"find . -execdir sh -c 'ls' \\;", []string{"find . -execdir sh -c ls ;", "sh -c ls", "ls"}},
		{"echo 'ls -l' | bash", []string{"echo ls -l", "bash", "ls -l"}},
		{"bash <<'EOF'\nmake\nEOF", []string{"bash", "make"}},
		{"sh <<< 'make all'", []string{"sh", "make all"}},
		{"watch -n 5 make test", []string{"watch -n 5 make test", "make test"}},
		{"env -S 'make all'", []string{"env -S make all", "make all"}},
		{"time make", []string{"make"}},
		{"coproc make", []string{"make"}},
	}
	for _, tt := range tests {
		if got := lines(mustParse(t, tt.src)); !slices.Equal(got, tt.want) {
			t.Errorf("Parse(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestParseResolvesQuotesAndWrappers(t *testing.T) {
	tests := []struct {
		src      string
		name     string
		args     []string
		program  string
		wrappers []string
		assigns  []string
	}{
		{`r''m -r"f" '/'`, "rm", []string{"-rf", "/"}, "rm", nil, nil},
		{`r\m -rf \/`, "rm", []string{"-rf", "/"}, "rm", nil, nil},
		{`$'\x72\x6d' $'-\162f'`, "rm", []string{"-rf"}, "rm", nil, nil},
		{`"/bin/rm" x`, "rm", []string{"x"}, "/bin/rm", nil, nil},
		{"sudo -u bob -E rm x", "rm", []string{"x"}, "rm", []string{"sudo -u bob -E"}, nil},
		{"env -i A=1 B=2 rm x", "rm", []string{"x"}, "rm", []string{"env -i"}, []string{"A=1", "B=2"}},
		{"X=1 nice -n 5 timeout -s KILL 10 nohup rm x", "rm", []string{"x"}, "rm", []string{"nice -n 5", "timeout -s KILL 10", "nohup"}, []string{"X=1"}},
		{"command rm x", "rm", []string{"x"}, "rm", []string{"command"}, nil},
		{"command -v rm", "command", []string{"-v", "rm"}, "command", nil, nil},
		{"xargs -0 -I{} rm {}", "rm", []string{"{}"}, "rm", []string{"xargs -0 '-I{}'"}, nil},
		{"busybox rm x", "rm", []string{"x"}, "rm", []string{"busybox"}, nil},
		{"stdbuf -oL -e 0 exec rm x", "rm", []string{"x"}, "rm", []string{"stdbuf -oL -e 0", "exec"}, nil},
		{"env", "env", nil, "env", nil, nil},
		{"sudo", "sudo", nil, "sudo", nil, nil},
		{"echo {a,b}c", "echo", []string{"ac", "bc"}, "echo", nil, nil},
		{`echo "a\"b" 'c\d' "e\f"`, "echo", []string{`a"b`, `c\d`, `e\f`}, "echo", nil, nil},
	}
	for _, tt := range tests {
		cmds := mustParse(t, tt.src)
		c := cmds[len(cmds)-1]
		if c.Name != tt.name || !slices.Equal(c.Args, tt.args) || c.Program != tt.program ||
			!slices.Equal(c.Wrappers, tt.wrappers) || !slices.Equal(c.Assigns, tt.assigns) {
			t.Errorf("Parse(%q) = name %q args %q program %q wrappers %q assigns %q;\nwant name %q args %q program %q wrappers %q assigns %q",
				tt.src, c.Name, c.Args, c.Program, c.Wrappers, c.Assigns, tt.name, tt.args, tt.program, tt.wrappers, tt.assigns)
		}
	}
}

func TestParseMarksWhatCannotBeRead(t *testing.T) {
	tests := []struct {
		src              string
		dynamic, opaque  bool
		container, xargs bool
	}{
		{src: "rm -rf $DIR", dynamic: true},
		{src: "rm -rf build"},
		{src: "$CMD x", dynamic: true, opaque: true},
		{src: "$(which rm) x", dynamic: true, opaque: true},
		{src: `bash -c "$X"`, dynamic: true, opaque: true},
		{src: "eval $X", dynamic: true, opaque: true},
		{src: "source $F", dynamic: true, opaque: true},
		{src: "bash <(cat x)", dynamic: true, opaque: true},
		{src: "base64 -d x | sh", opaque: true},
		{src: "cat x | bash -s", opaque: true},
		{src: "bash < <(cat x)", opaque: true},
		{src: "bash script.sh"},
		{src: "bash < script.sh"},
		{src: "bash"},
		{src: "bash -c 'ls'", container: true},
		{src: "xargs bash -c", dynamic: true, opaque: true},
		{src: "ls | xargs rm", dynamic: true},
	}
	for _, tt := range tests {
		cmds := mustParse(t, tt.src)
		var c Command
		for _, x := range cmds {
			if x.Name == "rm" || x.Name == "bash" || x.Name == "sh" || x.Name == "eval" || x.Name == "source" || x.Program == "$CMD" || strings.HasPrefix(x.Program, "$(") {
				c = x
				break
			}
		}
		if c.Dynamic != tt.dynamic || c.Opaque != tt.opaque || c.Container != tt.container {
			t.Errorf("Parse(%q): %q dynamic=%v opaque=%v container=%v, want %v %v %v",
				tt.src, c.Raw, c.Dynamic, c.Opaque, c.Container, tt.dynamic, tt.opaque, tt.container)
		}
	}
}

func TestParseStructure(t *testing.T) {
	cmds := mustParse(t, "curl -s x | tee f | sh")
	if sh := cmds[2]; !slices.Equal(sh.Feeds, []int{0, 1}) || !sh.Piped {
		t.Errorf("sh feeds = %v piped=%v, want [0 1] true", sh.Feeds, sh.Piped)
	}
	cmds = mustParse(t, "bash -c \"$(curl x)\"")
	if b := cmds[1]; b.Name != "bash" || !slices.Equal(b.Feeds, []int{0}) {
		t.Errorf("bash feeds = %v, want [0]", b.Feeds)
	}
	cmds = mustParse(t, ":(){ :|:& };:")
	if c := cmds[0]; c.Func != ":" || !c.Piped || !c.Background || c.Name != ":" {
		t.Errorf("fork bomb body = %+v", c)
	}
	cmds = mustParse(t, "bash -c 'bash -c \"rm x\"'")
	if got := cmds[len(cmds)-1]; got.Name != "rm" || got.Depth != 2 {
		t.Errorf("nested rm = %q depth %d, want depth 2", got.Name, got.Depth)
	}
	cmds = mustParse(t, "git   commit  -m 'a  b'  > log 2>&1 <in")
	c := cmds[0]
	if c.Raw != "git commit -m 'a  b'" {
		t.Errorf("Raw = %q", c.Raw)
	}
	wantRedirects := []Redirect{{Op: ">", Target: "log"}, {Op: ">&", FD: "2", Target: "1"}, {Op: "<", Target: "in"}}
	if !slices.Equal(c.Redirects, wantRedirects) {
		t.Errorf("Redirects = %+v, want %+v", c.Redirects, wantRedirects)
	}
	writes := []bool{true, false, false}
	for i, r := range c.Redirects {
		if r.Writes() != writes[i] {
			t.Errorf("%+v.Writes() = %v", r, r.Writes())
		}
	}
	cmds = mustParse(t, "{ ls; } > out")
	if last := cmds[len(cmds)-1]; last.Name != "" || len(last.Redirects) != 1 || last.Redirects[0].Target != "out" {
		t.Errorf("redirect of a block = %+v", last)
	}
	if c := mustParse(t, "echo x >&out")[0]; !c.Redirects[0].Writes() {
		t.Error(">&file should write")
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"echo 'unterminated",
		"if true; then",
		"rm -rf / $(",
		"bash -c 'echo \"x'", // the inner script does not parse
	} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%q): no error", src)
		}
	}
	// Shells nested deeper than maxDepth are refused, not followed forever.
	deep := "ls"
	for i := 0; i <= maxDepth; i++ {
		deep = "eval " + shellQuote(deep)
	}
	if _, err := Parse(deep); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("deep nesting: error = %v", err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestParseNeverPanics(t *testing.T) {
	for _, src := range []string{"", ";", "&&", "|", "$(", "${", "<<", "a=(1 2", "((", "[[ ", "\\", "'", "`", "<(", "f() {", "\x00", "{a,b", "${a:-$(", "echo ${!x[@]}"} {
		_, _ = Parse(src)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"rm -rf /", "bash -c 'ls | sh'", "echo $(a) `b` <(c)", "f(){ f|f& };f", "env -S 'x y' z", "find . -exec sh -c 'x' \\;", "sudo -u", "timeout", "xargs -I"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		cmds, err := Parse(src)
		if err != nil {
			return
		}
		for i, c := range cmds {
			for _, j := range c.Feeds {
				if j < 0 || j >= len(cmds) || j == i {
					t.Fatalf("Parse(%q): command %d fed by %d of %d", src, i, j, len(cmds))
				}
			}
		}
	})
}
