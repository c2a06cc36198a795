package search

import "strconv"

// RgArgs returns the ripgrep arguments that search root as Search would
// with o, printing the same lines, except that in FilesWithMatches mode rg
// ends each path with a NUL byte instead of a newline and lists the files
// in no particular order. rg must run with root (or, for a file, its
// directory) as its working directory, since --glob patterns are relative
// to it. Configuration files and the user's global gitignore are not read,
// so the output depends only on the tree and o.
func RgArgs(root string, o Options) []string {
	args := []string{"--no-config", "--color=never", "--no-heading", "--with-filename", "--no-ignore-global"}
	switch o.Mode {
	case FilesWithMatches:
		args = append(args, "--files-with-matches", "--null")
	case Count:
		args = append(args, "--count", "--sort=path")
	default:
		args = append(args, "--sort=path")
		if o.LineNumbers {
			args = append(args, "--line-number")
		} else {
			args = append(args, "--no-line-number")
		}
		if o.After > 0 {
			args = append(args, "--after-context="+strconv.Itoa(o.After))
		}
		if o.Before > 0 {
			args = append(args, "--before-context="+strconv.Itoa(o.Before))
		}
		if o.MaxColumns > 0 {
			args = append(args, "--max-columns="+strconv.Itoa(o.MaxColumns))
		}
	}
	if o.IgnoreCase {
		args = append(args, "--ignore-case")
	}
	if o.Multiline {
		args = append(args, "--multiline", "--multiline-dotall")
	}
	for _, g := range o.Globs {
		args = append(args, "--glob="+g)
	}
	if o.Type != "" {
		globs, _ := TypeGlobs(o.Type)
		for _, g := range globs {
			args = append(args, "--type-add="+rgTypeName+":"+g)
		}
		args = append(args, "--type="+rgTypeName)
	}
	return append(args, "--regexp="+o.Pattern, "--", root)
}

// rgTypeName is the file type RgArgs defines from TypeGlobs, so rg uses
// the same globs as the built-in searcher whatever its own table says.
const rgTypeName = "codatype"

// ValidateGlobs reports the first glob rg and Search would reject.
func ValidateGlobs(globs []string) error {
	_, err := Walker{Globs: globs}.compile("/")
	return err
}
