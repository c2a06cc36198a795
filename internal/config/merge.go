package config

import "slices"

// merge lays hi over lo, both settings documents or parts of them at path:
// objects merge key by key, the permission lists and each hook event's list
// of matcher groups concatenate (hi's entries first, duplicates dropped),
// and anything else comes from hi whole: scalars, other arrays, a null, and
// one MCP server's definition (mixing two servers' fields would make a
// server neither layer describes).
func merge(hi, lo *node, path keyPath) *node {
	switch {
	case hi == nil:
		return lo
	case lo == nil:
		return hi
	case hi.kind == kindObject && lo.kind == kindObject && !replacedWhole(path):
		out := newObject()
		out.off = hi.off
		for _, k := range hi.keys {
			out.set(k, merge(hi.obj[k], lo.obj[k], path.key(k)))
		}
		for _, k := range lo.keys {
			if out.get(k) == nil {
				out.set(k, lo.obj[k])
			}
		}
		return out
	case hi.kind == kindArray && lo.kind == kindArray && concatenates(path):
		out := &node{off: hi.off, kind: kindArray}
		for _, v := range slices.Concat(hi.arr, lo.arr) {
			if !slices.ContainsFunc(out.arr, func(w *node) bool { return equal(v, w) }) {
				out.arr = append(out.arr, v)
			}
		}
		return out
	}
	return hi
}

func concatenates(path keyPath) bool {
	if len(path) != 2 {
		return false
	}
	switch path[0] {
	case "permissions":
		switch path[1] {
		case "allow", "ask", "deny", "additionalDirectories":
			return true
		}
	case "hooks":
		return true
	}
	return false
}

func replacedWhole(path keyPath) bool {
	return len(path) == 2 && path[0] == "mcpServers"
}
