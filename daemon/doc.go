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
//     of that exchange are in shim/endpoint) and read the daemon's one-line reply. From
//     then on it relays: stdin to the socket, the socket to stdout, one line at a time,
//     changing neither a request nor an answer on the way.
//  2. Socket and peer check (socket_unix.go, endpoint.PeerCred, daemon.go handle). The socket is
//     0600 in a 0700 directory; the accept loop still checks the peer's uid on the
//     connection itself and closes on another user without a word.
//  3. Preamble (daemon.go handle, serveMCP). The preamble's environment picks the target:
//     one watcher, upstream and MCP server per distinct environment (targets.go), so two
//     harnesses pointing at two resmon instances never share answers. The reply line says
//     OK; the session is registered for status.
//  4. Line transport (lineconn.go). lineConn frames newline-delimited JSON-RPC: a line
//     is checked with json.Valid and its top level split in one pass when every key is
//     plain (encoding/json otherwise). Its socket is out of the runtime's poller
//     (internal/sockio Quiet: waited on for readable only, so the shim reading an answer
//     does not wake the daemon). A line that is not a message gets its JSON-RPC error and the session
//     goes on; the id of every request read is kept until it is answered, so a half-close
//     (the harness closed stdin) ends the session only after the answers owed are out.
//  5. Wire wrapper (proxy/wire.go). Between lineConn and the SDK: it notes which request
//     is a tools/call, tools/list or initialize, so that answers get what the SDK would not
//     put on them (requires_confirmation on tools/list, isError:false on a tool result)
//     and nothing is written for a request the client cancelled.
//  6. go-sdk (proxy/server.go NewServer). The SDK's server session decodes the request and
//     dispatches it. The proxy's middleware answers unknown tool names the reference's way
//     (an isError result), refuses the methods we do not serve, and reports every call
//     (name, outcome, duration, runtime id — never arguments) to the daemon's stats and
//     log (daemon.go recordCall, stats.go, logging.go). Once a session's first tools/call
//     has gone through the SDK, the wire wrapper serves later calls to known tools itself
//     with that same dispatcher (the fast path, proxy/wire_fast.go): the same tool run,
//     result and record, without the SDK's per-request dispatch.
//  7. The tool (proxy/tools.go table, proxy/tools_corpus.go toolSearchCorpus). The
//     arguments are decoded with exact numbers and checked against the row's own input
//     schema (proxy/types.go Tool.Run, proxy/argcheck.go): a refused argument is an
//     invalid_argument answer and nothing is sent. The handler builds the backend request
//     (POST /api/explorer/search with query, limit, sort).
//  8. Upstream (proxy/upstream.go). The call runs on the target's current verified
//     generation of the backend, as the discovery watcher (discovery/watcher.go) last
//     proved it: port and token files found, /api/health answered with the right identity.
//     With none verified the answer is backend_unavailable and nothing is sent (only the
//     very first check is waited for, bounded). A read whose generation vanished under it
//     is retried once on the next verified generation; a write never is.
//  9. Client (proxy/client.go). One connection pool per generation, a connection of its
//     own for writes, the request timeout, the token in the header (and registered with
//     scrub as it was read). A read is written and its answer read on the calling goroutine
//     over a pooled keep-alive connection (proxy/client_lean.go), on Linux through
//     internal/sockio, as lineConn's socket is (no wake-up of the runtime's sysmon per
//     call); writes go through net/http. A failure says whether the request was sent
//     (proxy/errors.go): not sent means nothing was done.
//  10. Backend. resmon (or resmonsim in tests) answers over 127.0.0.1.
//  11. Reply shape (proxy/replies.go, the handler). The body must be what the route returns
//     (here an object with a results list); anything else is an upstream_error saying what
//     came instead, never an empty success. The handler then shapes the answer: caveats and
//     counts the contract says travel with it stay in it.
//  12. Scrub (proxy/server.go toolResult, scrub/). The payload becomes the one text item of
//     the result, with every token this process has read replaced, whatever route a token
//     might have taken into it.
//  13. Answer. The SDK marshals the result (on the fast path the wire wrapper writes its
//     JSON itself: proxy/wire_fast.go encodeToolResult), the wire wrapper adds isError:false, lineConn
//     writes one line and marks the id answered, and the shim copies it to the harness's
//     stdout.
//
// An error at any step is an answer of the same shape: isError true and the contract's
// {"error", "message", "detail"} object, never a protocol error for a tool's failure.
package daemon
