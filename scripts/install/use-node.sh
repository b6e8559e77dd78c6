# Sourced, not run: installs the pinned Node 24 LTS (node.sh) and puts it first
# on PATH, so `node`, `npm` and `npx` (the machine's npm, whose scripts start
# with `#!/usr/bin/env node`), child processes and tests all run on the Node
# that ships. Native addons (pkcs11js, by node-gyp) build against the headers
# in that Node: nodejs.org, where node-gyp would fetch them, is not needed, and
# a `nodedir` in the user's .npmrc (another Node's headers) is overridden.
# Sourcing it twice is harmless.
DOCSERVICE_NODE_HOME="$(bash "$(dirname "${BASH_SOURCE[0]}")/node.sh")"
case ":$PATH:" in
  "$DOCSERVICE_NODE_HOME/bin:"*) ;;
  *) PATH="$DOCSERVICE_NODE_HOME/bin:$PATH" ;;
esac
export PATH DOCSERVICE_NODE_HOME
export npm_config_nodedir="$DOCSERVICE_NODE_HOME"
