package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// Model is the bubbletea model of the session screen.
type Model struct {
	o       Options
	ctx     context.Context // the session's; runs and commands derive from it
	now     func() time.Time
	th      theme
	md      *markdown
	profile colorprofile.Profile
	// printer moves text into the scrollback; tests record it instead.
	printer func(string) tea.Cmd

	width, height int
	sized         bool // a window size arrived; nothing prints before

	tr   transcript
	ed   editor
	hist *history
	pop  popup
	// popDismissed is the input text when Esc closed the popup; it stays
	// closed until the text changes.
	popDismissed *string
	files        []string
	filesLoading bool

	dialog *approval
	picker *picker
	pager  *pager

	run         *runState
	busy        string             // a command or "!" line running outside the agent
	shellCancel context.CancelFunc // stops a running "!" line
	queue       []string           // input typed while busy, sent when it ends

	mode          string
	modes         []string // what Shift+Tab cycles through
	usage         llm.Usage
	cost          float64
	contextTokens int
	branch        string
	shells        int
	todos         []tools.Todo

	hint      string // a transient line under the status line
	lastKey   string
	lastKeyAt time.Time

	outbox   []string
	printing bool
	frame    int
	ticking  bool
	quitting bool
}

// doublePress is how close two presses of Ctrl+C or Esc must be to count
// as "twice".
const doublePress = 1500 * time.Millisecond

// New returns the model; the agent's conversation so far (a resumed
// session) is shown as history.
func New(ctx context.Context, o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = "default"
	}
	m := &Model{
		o:       o,
		ctx:     ctx,
		now:     o.Now,
		th:      newTheme(),
		md:      newMarkdown(),
		profile: o.Profile,
		width:   80,
		height:  24,
		hist:    loadHistory(o.HistoryPath),
		mode:    o.Mode,
		modes:   []string{"default", "acceptEdits", "plan"},
	}
	if o.Mode == "bypassPermissions" || o.Mode == "dontAsk" {
		m.modes = append(m.modes, o.Mode)
	}
	m.printer = func(s string) tea.Cmd {
		return tea.Sequence(tea.Println(s), func() tea.Msg { return printedMsg{} })
	}
	if o.Agent != nil {
		m.usage, m.cost = o.Agent.Totals()
	}
	m.tr.add(&headerEntry{version: o.Version, model: m.modelName(), cwd: o.ProjectDir})
	for _, n := range o.Notes {
		m.notice(noticeWarn, n)
	}
	if o.Agent != nil {
		m.loadConversation(o.Agent.Conversation().Messages())
	}
	for _, n := range o.Info {
		m.notice(noticeInfo, n)
	}
	m.refreshTodos()
	return m
}

// Close stops a run still going and waits for the agent to let go of it.
func (m *Model) Close() {
	if m.shellCancel != nil {
		m.shellCancel()
	}
	if r := m.run; r != nil {
		r.cancel()
		if r.events != nil {
			for range r.events {
			}
		}
		m.run = nil
	}
}

type (
	saveFailedMsg struct{ err error }
	printedMsg    struct{}
	tickMsg       struct{}
	branchMsg     string
	filesMsg      []string
)

// Init asks for the git branch.
func (m *Model) Init() tea.Cmd {
	return m.loadBranch()
}

// Update handles a message, then moves whatever has finished into the
// scrollback.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.flush())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 5)
		m.sized = true
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	case tea.PasteMsg:
		return m.paste(msg.Content)
	case printedMsg:
		m.printing = false
	case tickMsg:
		m.frame++
		m.refreshShells()
		if m.isBusy() {
			return tick()
		}
		m.ticking = false
	case agentEventsMsg:
		return m.onEvents(msg)
	case commandDoneMsg:
		return m.onCommandDone(msg)
	case shellDoneMsg:
		return m.onShellDone(msg)
	case saveFailedMsg:
		m.notice(noticeWarn, "could not save the session: "+msg.err.Error())
	case branchMsg:
		m.branch = string(msg)
	case filesMsg:
		m.files, m.filesLoading = msg, false
		m.refreshPopup()
	}
	return nil
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// startTicking animates spinners while something runs.
func (m *Model) startTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tick()
}

func (m *Model) isBusy() bool { return m.run != nil || m.busy != "" }

func (m *Model) rc() *renderCtx {
	return &renderCtx{th: &m.th, md: m.md, cwd: m.o.ProjectDir, now: m.now(), frame: m.frame}
}

// flush queues finished entries for the scrollback and prints the queue
// when no print is in flight: one at a time keeps them in order.
func (m *Model) flush() tea.Cmd {
	if !m.sized || m.quitting {
		// Quitting, what was not printed stays in the last frame.
		return nil
	}
	m.outbox = append(m.outbox, m.tr.takePrintable(m.rc(), m.width)...)
	if m.printing || len(m.outbox) == 0 || m.pager != nil {
		return nil
	}
	text := "\n" + strings.Join(m.outbox, "\n\n")
	m.outbox = nil
	m.printing = true
	return m.printer(downsample(text, m.profile))
}

// quit ends the program; Close stops the agent afterwards.
func (m *Model) quit() tea.Cmd {
	if m.run != nil {
		m.run.cancel()
	}
	if m.shellCancel != nil {
		m.shellCancel()
	}
	m.quitting = true
	return tea.Quit
}

func (m *Model) modelName() string {
	if m.o.Agent == nil {
		return ""
	}
	return m.o.Agent.Model().Info.Key()
}

func (m *Model) refreshTodos() {
	if m.o.Env != nil && m.o.Env.Todos != nil {
		m.todos = m.o.Env.Todos.List()
	}
}

func (m *Model) refreshShells() {
	m.shells = 0
	if m.o.Env == nil || m.o.Env.Shells == nil {
		return
	}
	for _, s := range m.o.Env.Shells.List() {
		if s.State == tools.ShellRunning {
			m.shells++
		}
	}
}

// notice adds a short line to the transcript.
func (m *Model) notice(level noticeLevel, text string) {
	m.tr.add(&noticeEntry{text: text, level: level})
}

// View draws the live part of the screen.
func (m *Model) View() tea.View {
	if m.pager != nil {
		v := tea.NewView(m.pagerView())
		v.AltScreen = true
		return v
	}
	rc := m.rc()
	if m.quitting {
		// The last frame stays on the terminal: keep what never reached
		// the scrollback, drop the input.
		return tea.NewView(strings.Join(m.tr.live(rc, m.width), "\n\n") + "\n")
	}
	var below []string // everything under the live entries
	if s := m.activityLine(); s != "" {
		below = append(below, "", s)
	}
	if t := todoPanel(&m.th, m.todos, m.width); t != "" {
		if len(below) == 0 {
			below = append(below, "")
		}
		below = append(below, t)
	}
	for _, q := range m.queue {
		below = append(below, m.th.dim.Render(truncate("  ⏎ queued: "+strings.ReplaceAll(q, "\n", " "), m.width)))
	}
	below = append(below, "")
	inputTop := len(strings.Split(strings.Join(below, "\n"), "\n"))
	var input string
	cy, cx := -1, -1
	switch {
	case m.dialog != nil:
		input, cy, cx = m.dialog.view(rc, m.width, max(m.height-16, 4))
	case m.picker != nil:
		input = m.picker.view(&m.th, m.width)
	default:
		input, cy, cx = m.inputView()
	}
	below = append(below, input)
	if p := m.pop.view(&m.th, m.width); p != "" {
		below = append(below, p)
	}
	below = append(below, m.statusLine())
	if m.hint != "" {
		below = append(below, m.th.dim.Render(truncate("  "+m.hint, m.width)))
	}
	bottom := strings.Join(below, "\n")

	// The live entries get what is left of the screen; their newest lines
	// win (the renderer would otherwise drop the input off the bottom).
	room := m.height - strings.Count(bottom, "\n") - 1
	var live []string
	if entries := m.tr.live(rc, m.width); len(entries) > 0 {
		live = strings.Split("\n"+strings.Join(entries, "\n\n"), "\n")
	}
	if len(live) > room {
		live = live[len(live)-max(room, 0):]
	}
	content := bottom
	offset := 0
	if len(live) > 0 {
		content = strings.Join(live, "\n") + "\n" + bottom
		offset = len(live)
	}
	v := tea.NewView(content)
	if cy >= 0 {
		v.Cursor = tea.NewCursor(cx, offset+inputTop+cy)
	}
	return v
}

// inputView is the editor in its box, with the cursor's position in it.
func (m *Model) inputView() (string, int, int) {
	inner := m.width - 4
	if m.ed.empty() {
		placeholder := m.th.dim.Render(truncate(`❯ Try "explain this repository" · / commands · @ files · ! shell`, inner))
		if m.isBusy() {
			placeholder = m.th.dim.Render(truncate("❯ Type to queue a message for when coda is done", inner))
		}
		return box(m.th.border, placeholder, m.width), 1, 2 + 2
	}
	lines, cy, cx := m.ed.view(inner, 10, "❯ ")
	if hint := m.argHint(); hint != "" {
		lines[len(lines)-1] += m.th.dim.Render(hint)
	}
	return box(m.th.border, strings.Join(lines, "\n"), m.width), cy + 1, cx + 2
}
