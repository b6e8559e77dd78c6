// Preloaded by scripts/test.sh into every test file's process (node --test passes --import on to
// them; the runner itself does not load it). There, stdout is the socket that carries the file's
// results to the runner, and libuv writes it without blocking: a write the runner has no room for
// yet waits in this process, and --test-force-exit's process.exit() drops it (nodejs/node#64833).
// Blocking, every result is in the socket before the process exits.
if (process.env.NODE_TEST_CONTEXT === "child-v8") {
  (process.stdout as unknown as { _handle?: { setBlocking?(blocking: boolean): number } })._handle?.setBlocking?.(true);
}
export {};
