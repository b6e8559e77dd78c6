import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeProfileSettings } from "../../services/conversion/libreoffice-profile.js";
import { tool } from "./pdf-tools.js";

/**
 * `docx` as LibreOffice writes it with `--convert-to filter`, into a file
 * ending in `extension`, on the service's locked-down profile, so nothing the
 * DOCX links to is loaded and its links stay links. Run without blocking this
 * process: a test's keep-alive connections to a platform stay ones it watches
 * (blocked past the platform's keep-alive timeout, a test sent its next upload
 * on a connection the platform had closed).
 */
export async function writtenByLibreOffice(docx: Buffer, extension: string, filter = extension): Promise<Buffer> {
  const directory = mkdtempSync(join(tmpdir(), "docservice-soffice-"));
  try {
    const profile = join(directory, "profile");
    writeProfileSettings(profile);
    writeFileSync(join(directory, "source.docx"), docx);
    const args = ["--headless", "--norestore", `-env:UserInstallation=${pathToFileURL(profile).href}`, "--convert-to", filter, "--outdir", directory, join(directory, "source.docx")];
    const result = await tool("soffice", args);
    if (result.code !== 0) throw new Error(`soffice --convert-to ${filter} failed: ${result.stderr}`);
    return readFileSync(join(directory, `source.${extension}`));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * A Word 97-2003 document (.doc) written by LibreOffice from `docx`: it writes
 * a linked picture as an INCLUDEPICTURE field, and keeps INCLUDETEXT and LINK
 * fields.
 */
export function docFromDocx(docx: Buffer): Promise<Buffer> {
  return writtenByLibreOffice(docx, "doc", "doc:MS Word 97");
}
