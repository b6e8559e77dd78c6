import { REPORT_LIMITS } from "./report-limits.js";

/** What a report says about the page it comes from, within REPORT_LIMITS; empty strings and zeros outside a browser. */
export interface BrowserInfo {
  readonly userAgent: string;
  /** The page's address without its query string and fragment, which can carry tokens. */
  readonly currentUrl: string;
  readonly hostname: string;
  readonly screenSize: { readonly width: number; readonly height: number };
}

interface BrowserWindow {
  readonly navigator?: { readonly userAgent?: unknown };
  readonly location?: { readonly origin?: unknown; readonly pathname?: unknown; readonly hostname?: unknown };
  readonly screen?: { readonly width?: unknown; readonly height?: unknown };
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
/** At most `max` UTF-16 units, never half a surrogate pair. */
const cut = (value: string, max: number): string => (value.length <= max ? value : value.slice(0, /[\uD800-\uDBFF]/.test(value[max - 1]!) ? max - 1 : max));
const size = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) ? Math.min(Math.max(Math.round(value), 0), REPORT_LIMITS.maxScreenPixels) : 0;

const pageWindow = (): BrowserWindow | undefined => {
  const window = (globalThis as { window?: BrowserWindow }).window;
  return window && typeof window === "object" ? window : undefined;
};

/** The page's origin; "" outside a page, or when the page has none of its own (a file: or sandboxed page says "null"). */
export function pageOrigin(): string {
  try {
    const origin = text(pageWindow()?.location?.origin);
    return origin === "null" ? "" : origin;
  } catch {
    return ""; // a hostile or half-built window object
  }
}

export function browserInfo(): BrowserInfo {
  try {
    const window = pageWindow();
    if (window) {
      const origin = pageOrigin();
      return {
        userAgent: cut(text(window.navigator?.userAgent), REPORT_LIMITS.maxTextChars.userAgent),
        currentUrl: cut(origin && origin + text(window.location?.pathname), REPORT_LIMITS.maxTextChars.currentUrl),
        hostname: cut(text(window.location?.hostname), REPORT_LIMITS.maxTextChars.hostname),
        screenSize: { width: size(window.screen?.width), height: size(window.screen?.height) },
      };
    }
  } catch {
    // a hostile or half-built window object: report nothing about it
  }
  return { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } };
}
