package commands

import (
	"sort"
	"strings"
)

// Registry holds the commands of a session by name and alias.
type Registry struct {
	byName  map[string]*Command
	byAlias map[string]*Command
}

// NewRegistry returns a registry holding cmds.
func NewRegistry(cmds ...*Command) *Registry {
	r := &Registry{byName: map[string]*Command{}, byAlias: map[string]*Command{}}
	for _, c := range cmds {
		r.Register(c)
	}
	return r
}

// Register adds c, replacing a command of the same name. An alias never
// shadows another command's name.
func (r *Registry) Register(c *Command) {
	name := strings.ToLower(c.Name)
	if old, ok := r.byName[name]; ok {
		for _, a := range old.Aliases {
			delete(r.byAlias, strings.ToLower(a))
		}
	}
	r.byName[name] = c
	for _, a := range c.Aliases {
		r.byAlias[strings.ToLower(a)] = c
	}
}

// Lookup finds a command by name or alias, ignoring case.
func (r *Registry) Lookup(name string) (*Command, bool) {
	name = strings.ToLower(name)
	if c, ok := r.byName[name]; ok {
		return c, true
	}
	c, ok := r.byAlias[name]
	return c, ok
}

// Commands lists the visible commands sorted by name.
func (r *Registry) Commands() []*Command {
	out := make([]*Command, 0, len(r.byName))
	for _, c := range r.byName {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the visible command names, without the slash, sorted (for
// the stream-json init line).
func (r *Registry) Names() []string {
	cmds := r.Commands()
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Name
	}
	return out
}

// Nearest is the visible command whose name or alias is closest to name,
// or nil when nothing is close enough to be a likely typo.
func (r *Registry) Nearest(name string) *Command {
	name = strings.ToLower(name)
	var best *Command
	bestDist := 1 << 30
	consider := func(candidate string, c *Command) {
		d := editDistance(name, candidate)
		if strings.HasPrefix(candidate, name) && len(name) >= 2 {
			d = min(d, 1)
		}
		if d < bestDist || (d == bestDist && best != nil && c.Name < best.Name) {
			best, bestDist = c, d
		}
	}
	for _, c := range r.Commands() {
		consider(strings.ToLower(c.Name), c)
		for _, a := range c.Aliases {
			consider(strings.ToLower(a), c)
		}
	}
	if best == nil || bestDist > max(2, len(name)/3) {
		return nil
	}
	return best
}

// editDistance is the Levenshtein distance counting a swap of neighbours
// as one edit (the commonest typo).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
