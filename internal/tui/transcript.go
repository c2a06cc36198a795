package tui

// transcript is the conversation as the user sees it. Finished entries at
// the front move to the terminal's scrollback, printed once; the rest
// stay in the live area at the bottom and are redrawn every frame. That
// is what keeps a frame's cost independent of the conversation's length.
type transcript struct {
	slots []*slot
	// printed entries are in the scrollback; of entry `printed` itself
	// (a streaming answer) the first `partial` chunks are.
	printed int
	partial int
}

// slot caches a finished entry's rendering.
type slot struct {
	e        entry
	width    int
	expanded bool
	out      string
	valid    bool
}

func (t *transcript) add(e entry) { t.slots = append(t.slots, &slot{e: e}) }

func (t *transcript) len() int { return len(t.slots) }

func (t *transcript) at(i int) entry { return t.slots[i].e }

// last is the newest entry, or nil.
func (t *transcript) last() entry {
	if len(t.slots) == 0 {
		return nil
	}
	return t.slots[len(t.slots)-1].e
}

// render draws entry i, from the cache when it is finished.
func (t *transcript) render(rc *renderCtx, i, width int, expanded bool) string {
	s := t.slots[i]
	if s.valid && s.width == width && s.expanded == expanded {
		return s.out
	}
	out := s.e.render(rc, width, expanded)
	if s.e.finished() {
		s.width, s.expanded, s.out, s.valid = width, expanded, out, true
	}
	return out
}

// takePrintable returns what can move to the scrollback now, one string
// per entry or chunk, and counts it as printed.
func (t *transcript) takePrintable(rc *renderCtx, width int) []string {
	var out []string
	for t.printed < len(t.slots) {
		e := t.slots[t.printed].e
		a, isAnswer := e.(*assistantEntry)
		if e.finished() {
			var s string
			if isAnswer && t.partial > 0 {
				s = a.renderFrom(rc, width, t.partial)
			} else {
				s = t.render(rc, t.printed, width, false)
			}
			if s != "" {
				out = append(out, s)
			}
			t.printed++
			t.partial = 0
			continue
		}
		if isAnswer && len(a.s.chunks) > t.partial {
			for i := t.partial; i < len(a.s.chunks); i++ {
				s := a.s.chunk(rc.md, i, width-cols(contPrefix))
				if i == 0 {
					out = append(out, indent(s, bulletPrefix, contPrefix))
				} else {
					out = append(out, indent(s, contPrefix, contPrefix))
				}
			}
			t.partial = len(a.s.chunks)
		}
		break
	}
	return out
}

// live draws the entries not yet in the scrollback.
func (t *transcript) live(rc *renderCtx, width int) []string {
	var out []string
	for i := t.printed; i < len(t.slots); i++ {
		var s string
		if a, ok := t.slots[i].e.(*assistantEntry); ok && i == t.printed && t.partial > 0 {
			s = a.renderFrom(rc, width, t.partial)
		} else {
			s = t.render(rc, i, width, false)
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// drop removes entry i if none of it has been printed, reporting whether
// it could.
func (t *transcript) drop(i int) bool {
	if i < t.printed || (i == t.printed && t.partial > 0) {
		return false
	}
	t.slots = append(t.slots[:i], t.slots[i+1:]...)
	return true
}

// clear forgets every entry (a new conversation).
func (t *transcript) clear() {
	t.slots = nil
	t.printed, t.partial = 0, 0
}
