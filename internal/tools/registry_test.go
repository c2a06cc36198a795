package tools

import (
	"sync"
	"testing"
)

func TestRegistrySpecsFollowChanges(t *testing.T) {
	r := NewRegistry(NewRead(), NewGlob())
	first := r.Specs()
	if len(first) != 2 || first[0].Name != "Glob" || first[1].Name != "Read" {
		t.Fatalf("specs = %+v", first)
	}
	if again := r.Specs(); &again[0] != &first[0] {
		t.Error("specs rebuilt although no tool changed")
	}
	r.Register(NewWrite())
	if got := r.Specs(); len(got) != 3 || got[2].Name != "Write" {
		t.Fatalf("after Register: %+v", got)
	}
	r.Remove("Glob")
	if got := r.Specs(); len(got) != 2 || got[0].Name != "Read" {
		t.Fatalf("after Remove: %+v", got)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); r.Specs() }()
		go func() { defer wg.Done(); r.Register(NewEdit()) }()
	}
	wg.Wait()
}
