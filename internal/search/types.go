package search

import "sort"

// fileTypes maps ripgrep file type names to the file-name globs that make a
// file of that type. The globs follow ripgrep's built-in table; the Grep
// tool hands these same globs to rg, so both searchers agree.
var fileTypes = map[string][]string{
	"c":          {"*.[chH]", "*.[chH].in", "*.cats"},
	"clojure":    {"*.clj", "*.cljc", "*.cljs", "*.cljx"},
	"cmake":      {"*.cmake", "CMakeLists.txt"},
	"cpp":        {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
	"cs":         {"*.cs"},
	"csharp":     {"*.cs"},
	"css":        {"*.css", "*.scss"},
	"csv":        {"*.csv"},
	"dart":       {"*.dart"},
	"docker":     {"*Dockerfile*"},
	"elixir":     {"*.eex", "*.ex", "*.exs"},
	"erlang":     {"*.erl", "*.hrl"},
	"fish":       {"*.fish"},
	"go":         {"*.go"},
	"gradle":     {"*.gradle"},
	"graphql":    {"*.graphql", "*.graphqls"},
	"groovy":     {"*.gradle", "*.groovy"},
	"h":          {"*.h", "*.hpp"},
	"haskell":    {"*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"},
	"html":       {"*.ejs", "*.htm", "*.html"},
	"java":       {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":         {"*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"},
	"json":       {"*.json", "composer.lock"},
	"jsonl":      {"*.jsonl"},
	"julia":      {"*.jl"},
	"jupyter":    {"*.ipynb", "*.jpynb"},
	"kotlin":     {"*.kt", "*.kts"},
	"less":       {"*.less"},
	"lua":        {"*.lua"},
	"make":       {"*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"},
	"markdown":   {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
	"md":         {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
	"nix":        {"*.nix"},
	"objc":       {"*.h", "*.m"},
	"ocaml":      {"*.ml", "*.mli", "*.mll", "*.mly"},
	"perl":       {"*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"},
	"php":        {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
	"protobuf":   {"*.proto"},
	"ps":         {"*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"},
	"py":         {"*.py", "*.pyi"},
	"python":     {"*.py", "*.pyi"},
	"r":          {"*.R", "*.Rmd", "*.Rnw", "*.r"},
	"ruby":       {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
	"rust":       {"*.rs"},
	"sass":       {"*.sass", "*.scss"},
	"scala":      {"*.sbt", "*.scala"},
	"sh":         {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
	"sql":        {"*.psql", "*.sql"},
	"svelte":     {"*.svelte"},
	"swift":      {"*.swift"},
	"terraform":  {"*.tf", "*.tfvars"},
	"tex":        {"*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"},
	"tf":         {"*.tf", "*.tfvars"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"txt":        {"*.txt"},
	"typescript": {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"vim":        {"*.vim"},
	"vue":        {"*.vue"},
	"xml":        {"*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
	"zsh":        {"*.zsh", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
}

// TypeGlobs returns the file-name globs of a file type ("go", "py", ...).
func TypeGlobs(name string) ([]string, bool) {
	globs, ok := fileTypes[name]
	return append([]string(nil), globs...), ok
}

// TypeNames lists the known file types, sorted.
func TypeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
