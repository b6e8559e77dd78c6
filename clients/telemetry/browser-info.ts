/** What a report says about the page it comes from; empty strings and zeros outside a browser. */
export interface BrowserInfo {
  readonly userAgent: string;
  /** The page's origin only (scheme, host, port): paths and query strings can name documents or carry tokens. */
  readonly currentUrl: string;
  readonly hostname: string;
  readonly screenSize: { readonly width: number; readonly height: number };
}

interface BrowserWindow {
  readonly navigator?: { readonly userAgent?: unknown };
  readonly location?: { readonly origin?: unknown; readonly hostname?: unknown };
  readonly screen?: { readonly width?: unknown; readonly height?: unknown };
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const size = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

export function browserInfo(): BrowserInfo {
  try {
    const window = (globalThis as { window?: BrowserWindow }).window;
    if (window && typeof window === "object") {
      return {
        userAgent: text(window.navigator?.userAgent),
        currentUrl: text(window.location?.origin),
        hostname: text(window.location?.hostname),
        screenSize: { width: size(window.screen?.width), height: size(window.screen?.height) },
      };
    }
  } catch {
    // a hostile or half-built window object: report nothing about it
  }
  return { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } };
}
