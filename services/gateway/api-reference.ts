import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * The API reference at /docs: a page that renders the gateway's own
 * /openapi.json with Redoc, whose standalone bundle is served from here too
 * (no CDN: the page loads nothing from elsewhere). The bundle comes from the
 * redoc package, in node_modules while developing and copied into dist/ by
 * `npm run build` for the images. Paths are relative, so the page also works
 * behind a proxy that serves the gateway under a prefix.
 */
export const API_REFERENCE_PATHS = { page: "/docs", script: "/docs/redoc.standalone.js" } as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>DocService API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0 }</style>
</head>
<body>
<redoc spec-url="openapi.json" expand-responses="200,201,202"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;

/**
 * What the page may load and run: its own origin's script and document,
 * inline styles (Redoc's styled-components write them), and the worker Redoc
 * starts from a blob for its search index.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface ApiReferenceFile {
  contentType: string;
  body: string | Buffer;
  headers: Record<string, string>;
}

/** The page and the renderer's bundle, read once. */
export function apiReferenceFiles(): Record<string, ApiReferenceFile> {
  const bundle = readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"));
  return {
    [API_REFERENCE_PATHS.page]: { contentType: "text/html; charset=utf-8", body: PAGE, headers: { "Content-Security-Policy": CONTENT_SECURITY_POLICY } },
    [API_REFERENCE_PATHS.script]: { contentType: "text/javascript; charset=utf-8", body: bundle, headers: { "Cache-Control": "public, max-age=86400" } },
  };
}
