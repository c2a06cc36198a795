package tui

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fuzzyScore matches query against target as a case-insensitive
// subsequence. Matches at the start, at word starts (after / . _ - or a
// space) and in runs score higher; gaps and long targets score lower. Each
// place the first letter occurs is tried as the start of the match.
func fuzzyScore(query, target string) (int, bool) {
	if query == "" {
		return 0, true
	}
	q := []rune(strings.ToLower(query))
	t := []rune(target)
	lower := []rune(strings.ToLower(target))
	best, found := 0, false
	for start := range lower {
		if lower[start] != q[0] {
			continue
		}
		if s, ok := matchFrom(q, t, lower, start); ok && (!found || s > best) {
			best, found = s, true
		}
	}
	if !found {
		return 0, false
	}
	if strings.HasPrefix(strings.ToLower(target), string(q)) {
		best += 40
	}
	return best - utf8.RuneCountInString(target)/4, true
}

// matchFrom matches q greedily from t[start].
func matchFrom(q, t, lower []rune, start int) (int, bool) {
	score, qi, prevMatch := 0, 0, -2
	for i := start; i < len(t) && qi < len(q); i++ {
		if lower[i] != q[qi] {
			if qi > 0 {
				score-- // a gap inside the match
			}
			continue
		}
		score += 10
		switch {
		case i == 0:
			score += 30
		case prevMatch == i-1:
			score += 15
		case strings.ContainsRune("/._- ", t[i-1]):
			score += 20
		case unicode.IsUpper(t[i]) && unicode.IsLower(t[i-1]):
			score += 20 // camelCase
		}
		prevMatch = i
		qi++
	}
	return score, qi == len(q)
}

// fuzzyRank returns the indexes of candidates matching query, best first;
// ties keep the candidates' order.
func fuzzyRank(query string, candidates []string, limit int) []int {
	type hit struct{ i, score int }
	var hits []hit
	for i, c := range candidates {
		if s, ok := fuzzyScore(query, c); ok {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.i
	}
	return out
}
