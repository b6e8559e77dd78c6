import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One setting of LibreOffice's configuration, as registrymodifications.xcu holds it. */
interface ProfileSetting {
  path: string;
  name: string;
  /** The value as XML: `<value>true</value>`, `<value/>` for an empty list. */
  value: string;
  /** Why it is set (for the reader of this file). */
  why: string;
}

/**
 * Port 1 of loopback: tcpmux, which nothing runs, so a connection is refused
 * at once (a name that does not resolve would wait on DNS, and a search
 * domain could make it resolve).
 */
const NO_NETWORK_PROXY = { host: "127.0.0.1", port: 1 };

/** Every HTTP, HTTPS and FTP request through NO_NETWORK_PROXY, with no host exempt. */
function proxySettings(): ProfileSetting[] {
  const path = "/org.openoffice.Inet/Settings";
  const why = "no URL is reached directly: LibreOffice makes no connection for a linked resource when a proxy is set";
  return [
    { path, name: "ooInetProxyType", value: "<value>1</value>", why: "manual proxies, never the system's" },
    ...["HTTP", "HTTPS", "FTP"].flatMap((scheme) => [
      { path, name: `ooInet${scheme}ProxyName`, value: `<value>${NO_NETWORK_PROXY.host}</value>`, why },
      { path, name: `ooInet${scheme}ProxyPort`, value: `<value>${NO_NETWORK_PROXY.port}</value>`, why },
    ]),
    { path, name: "ooInetNoProxy", value: "<value/>", why: "no host bypasses the proxy" },
  ];
}

/**
 * The settings every LibreOffice the service starts runs with, so that a
 * converted document cannot make it read anything outside the document.
 * LibreOffice 7.4 otherwise loads what a document links to (DOCX pictures
 * with an External relationship, ODT draw:image and linked draw:object) over
 * HTTP and from local files, and converts it into the output;
 * BlockUntrustedRefererLinks stops that (test/integration/convert-linked-content.test.ts).
 * What 7.4 loads regardless (ODT background images and template, RTF
 * INCLUDEPICTURE) is removed from the document before conversion
 * (odt-links.ts, rtf-fields.ts). A DOC's INCLUDEPICTURE field still made
 * 7.4 send OPTIONS and HEAD to its URL (and connect to an ftp:// one) past
 * BlockUntrustedRefererLinks: with a proxy set (NO_NETWORK_PROXY) it makes no
 * connection at all (strace: no connect(), to the target or the proxy), and
 * a LibreOffice that did go through the proxy would find nothing there. The
 * other settings are hardening around it.
 */
export const LOCKED_DOWN_SETTINGS: readonly ProfileSetting[] = [
  {
    path: "/org.openoffice.Office.Common/Security/Scripting",
    name: "BlockUntrustedRefererLinks",
    value: "<value>true</value>",
    why: "nothing a document links to (graphics, media, sub-documents) is loaded unless the document lies in a trusted location",
  },
  {
    path: "/org.openoffice.Office.Common/Security/Scripting",
    name: "SecureURL",
    value: "<value/>",
    why: "there are no trusted locations, whatever the installation's defaults",
  },
  {
    path: "/org.openoffice.Office.Common/Security/Scripting",
    name: "MacroSecurityLevel",
    value: "<value>3</value>",
    why: "very high: no macro runs, and links are never updated without asking just because the level is low",
  },
  {
    path: "/org.openoffice.Office.Writer/Content/Update",
    name: "Link",
    value: "<value>0</value>",
    why: "Writer never updates links (sections, OLE objects) on load; a document that asks for it gets a question, which headless LibreOffice cancels",
  },
  ...proxySettings(),
];

const XCU_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n';
const XCU_TAIL = "</oor:items>\n";

const item = (setting: ProfileSetting) =>
  `<item oor:path="${setting.path}"><prop oor:name="${setting.name}" oor:op="fuse">${setting.value}</prop></item>`;

/**
 * Writes `settings` into the LibreOffice user profile at `profileDirectory`
 * (what `-env:UserInstallation` names) before LibreOffice starts on it. A
 * profile LibreOffice already wrote keeps its other settings (among them the
 * first-start marks that keep its start fast); an earlier value of one of
 * these settings is replaced.
 */
export function writeProfileSettings(profileDirectory: string, settings: readonly ProfileSetting[] = LOCKED_DOWN_SETTINGS): void {
  const userDirectory = join(profileDirectory, "user");
  mkdirSync(userDirectory, { recursive: true });
  const file = join(userDirectory, "registrymodifications.xcu");
  const existing = existsSync(file) ? readFileSync(file, "utf8") : "";
  const end = existing.lastIndexOf("</oor:items>");
  const start = existing.indexOf("<item ");
  const kept =
    end < 0 || start < 0 || start > end
      ? []
      : existing
          .slice(start, end)
          .split(/(?=<item )/)
          .map((line) => line.trim())
          .filter((line) => line && !settings.some((s) => line.startsWith(`<item oor:path="${s.path}"><prop oor:name="${s.name}" `)));
  writeFileSync(file, `${XCU_HEAD}${[...kept, ...settings.map(item)].join("\n")}\n${XCU_TAIL}`);
}
