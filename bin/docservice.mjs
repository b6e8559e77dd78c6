#!/usr/bin/env node
// `npx docservice`: the CLI is TypeScript (clients/cli), run through tsx like the services.
import { register } from "tsx/esm/api";

register();
await import("../clients/cli/docservice.ts");
