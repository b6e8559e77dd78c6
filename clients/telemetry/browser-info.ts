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
        userAgent: text(window.navigator?.userAgent),
        currentUrl: origin && origin + text(window.location?.pathname),
        hostname: text(window.location?.hostname),
        screenSize: { width: size(window.screen?.width), height: size(window.screen?.height) },
      };
    }
  } catch {
    // a hostile or half-built window object: report nothing about it
  }
  return { userAgent: "", currentUrl: "", hostname: "", screenSize: { width: 0, height: 0 } };
}
