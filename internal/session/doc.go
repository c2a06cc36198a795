// Package session keeps every conversation durable: one JSONL transcript
// per session, appended before the conversation moves on, locked against a
// second writer, read back tolerantly (resume, fork, listing), and the file
// checkpoints that let /rewind put the user's files back as they were.
//
// A project's sessions live under
// <home>/.coda/projects/<project-slug>/sessions/, never in the repository:
//
//	<id>.jsonl          the transcript: one Record per line
//	<id>.lock           flock held by the process appending; holds its PID
//	<id>/blobs/<sha256> file content saved before a tool changed the file
//	<id>/tool-results/  large tool outputs kept beside the transcript
//	<id>/index.json     what List read so far, so it reads only what follows
//
// Reading is forgiving by design: a crash can cut the last line short, a
// newer coda can write record types this one does not know, a tool_use can
// be left without its result. Lines that do not parse are skipped and
// counted, unknown records are kept in the file and ignored, and the
// conversation is cut back to the last point a provider would accept.
package session
