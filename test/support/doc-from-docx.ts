import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeProfileSettings } from "../../services/conversion/libreoffice-profile.js";
import { tool } from "./pdf-tools.js";

/**
 * A Word 97-2003 document (.doc) written by LibreOffice from `docx`, on the
 * service's locked-down profile, so nothing the DOCX links to is loaded and
 * its links stay links: LibreOffice writes a linked picture as an
 * INCLUDEPICTURE field, and keeps INCLUDETEXT and LINK fields.
 */
export async function docFromDocx(docx: Buffer): Promise<Buffer> {
  const directory = mkdtempSync(join(tmpdir(), "docservice-doc-"));
  try {
    const profile = join(directory, "profile");
    writeProfileSettings(profile);
    writeFileSync(join(directory, "source.docx"), docx);
    const args = ["--headless", "--norestore", `-env:UserInstallation=${pathToFileURL(profile).href}`, "--convert-to", "doc:MS Word 97", "--outdir", directory, join(directory, "source.docx")];
    const result = await tool("soffice", args);
    if (result.code !== 0) throw new Error(`soffice --convert-to doc failed: ${result.stderr}`);
    return readFileSync(join(directory, "source.doc"));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
