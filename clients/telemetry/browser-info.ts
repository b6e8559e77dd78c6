/** What a report says about the page it comes from; empty strings and zeros outside a browser. */
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
const size = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Origin and path; "" when the page has no origin of its own (a file: or sandboxed page says "null"). */
function pageAddress(location: BrowserWindow["location"]): string {
  const origin = text(location?.origin);
  return origin && origin !== "null" ? origin + text(location?.pathname) : "";
}

export function browserInfo(): BrowserInfo {
  try {
    const window = (globalThis as { window?: BrowserWindow }).window;
    if (window && typeof window === "object") {
      return {
        userAgent: text(window.navigator?.userAgent),
        currentUrl: pageAddress(window.location),
        hostname: text(window.location?.hostname),
        screenSize: { width: size(window.screen?.width), height: size(window.screen?.height) },
      };
    }
  } catch {
    // a hostile or half-built window object: report nothing about it
  }
  return { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } };
}
