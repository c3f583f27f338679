// Package daemon is the long-lived per-user gateway: the MCP socket, sessions bound to
// targets, hot swap across backend restarts, status, lifecycle and logging.
//
// # One tool call, end to end
//
// A harness sends {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":
// "search_corpus","arguments":{"query":"graph"}}} on the stdin of `resmongw stdio`. What
// happens to it, in order (each step names where it lives):
//
//  1. Shim relay (shim/). The shim has already dialled the socket, written one preamble
//     line (its kind, protocol and the harness's RESMON_* / HOME environment; both halves
//     of that exchange are in sessionwire) and read the daemon's one-line reply. From then
//     on it relays: stdin to the socket, the socket to stdout, one line at a time, changing
//     neither a request nor an answer on the way. Lines are framed by sessionwire.LineReader
//     (a harness line over 1 MiB is answered Invalid Request and never sent), and read with
//     encoding/json only for what a restart needs: id and method (shim/scan.go); the tool a
//     tools/call names is read from the kept line only once a daemon went away.
//  2. Socket and peer check (socket_unix.go, sessionwire.PeerCred, daemon.go handle). The
//     socket is 0600 in a 0700 directory; the accept loop still checks the peer's uid on the
//     connection itself and closes on another user without a word.
//  3. Preamble (daemon.go handle, serveMCP). The preamble's environment picks the target:
//     one watcher, upstream and MCP server per distinct environment (targets.go), so two
//     harnesses pointing at two resmon instances never share answers. The session is
//     registered (so a stop from now on drains it and says goodbye), then the reply line
//     says OK.
//  4. Line transport (lineconn.go). lineConn frames newline-delimited JSON-RPC with the same
//     sessionwire.LineReader (bounded: a line over the bound gets its JSON-RPC error and is
//     discarded to its newline) and decodes each line with encoding/json. A line that is not
//     a message gets its JSON-RPC error and the session goes on; the id of every request read
//     is kept until it is answered, so a half-close (the harness closed stdin) ends the
//     session only after the answers owed are out, and at most 64 run at once.
//  5. Wire wrapper (mcpserver/wire.go, put on by mcpserver.Connect). Between lineConn and the SDK: it notes which request
//     is a tools/call, tools/list or initialize, so that answers get what the SDK would not
//     put on them (requires_confirmation and table order on tools/list, isError:false on a
//     tool result) and nothing is written for a request the client cancelled.
//  6. go-sdk (mcpserver/server.go NewServer). Every MCP message goes through the SDK's server
//     session, on both protocol families: initialize-based, and 2026-07-28 (server/discover,
//     client info and capabilities in each request's _meta). It decodes the request (keys
//     matched exactly: "Name" is no tool's name) and dispatches it. The server's middleware
//     answers unknown tool names the reference's way (an isError result), refuses the methods
//     we do not serve, and reports every call (name, outcome, duration, runtime id — never
//     arguments) to the daemon's stats and log (daemon.go recordCall, stats.go, logging.go).
//  7. The tool (its row in toolfacts/table.go, its handler tools/tools_corpus.go
//     toolSearchCorpus, keyed in tools/handlers.go). The arguments are decoded with exact
//     numbers and checked against the row's own input schema (tools/tool.go Tool.Run,
//     tools/argcheck.go): a refused argument is an
//     invalid_argument answer and nothing is sent. The handler builds the backend request
//     (POST /api/explorer/search with query, limit, sort).
//  8. Upstream (backend/upstream.go). The call runs on the target's current verified
//     generation of the backend, as the discovery watcher (discovery/watcher.go) last
//     proved it: port and token files found, /api/health answered with the right identity.
//     With none verified the answer is backend_unavailable and nothing is sent (only the
//     very first check is waited for, bounded). A read whose generation vanished under it
//     is retried once on the next verified generation; a write never is.
//  9. Client (backend/client.go). net/http with one tuned Transport per generation (a bounded
//     keep-alive pool; idle connections dropped before resmon drops them), a connection of
//     its own for each write, the request timeout, the token in the header (and registered
//     with scrub as it was read), answers bounded at 4 MiB. A failure says whether the
//     request was sent (backend/errors.go): not sent means nothing was done.
//  10. Backend. resmon (or resmonsim in tests) answers over 127.0.0.1.
//  11. Reply shape (tools/replies.go, the handler). The body must be what the route returns
//     (here an object with a results list); anything else is an upstream_error saying what
//     came instead, never an empty success. The handler then shapes the answer: caveats and
//     counts the contract says travel with it stay in it.
//  12. Scrub (mcpserver/server.go toolResult, scrub/). The payload becomes the one text item of
//     the result, with every token this process has read replaced, whatever route a token
//     might have taken into it.
//  13. Answer. The SDK marshals the result, the wire wrapper adds isError:false, lineConn
//     writes one line (jsonrpc.EncodeMessage) and marks the id answered, and the shim copies
//     it to the harness's stdout.
//
// An error at any step is an answer of the same shape: isError true and the contract's
// {"error", "message", "detail"} object, never a protocol error for a tool's failure.
package daemon
