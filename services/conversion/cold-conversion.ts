import { basename, dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { killGroup, spawnGroup } from "./process-groups.js";
import { convertToArgument, type LibreOfficeExport } from "./libreoffice-export.js";
import { writeProfileSettings } from "./libreoffice-profile.js";

/**
 * Converts with a one-off `soffice --convert-to`, LibreOffice loading the file
 * in-process. Slow (about a second), so it is only the fallback for documents
 * the warm UNO path cannot load: LibreOffice 7.4 aborts or refuses some valid
 * files (embedded OLE attachments, some CJK layouts) when they are loaded over
 * a UNO bridge, and converts them fine this way. Resolves with the output's path;
 * rejects when soffice fails, or when it runs past `timeoutMs` (then its whole
 * process group is killed).
 */
export function convertCold(inputPath: string, importFilter: string, exported: LibreOfficeExport, profileDirectory: string, timeoutMs: number): Promise<string> {
  const outputDirectory = dirname(inputPath);
  writeProfileSettings(profileDirectory);
  const child = spawnGroup(
    "soffice",
    [
      "--headless",
      "--norestore",
      `-env:UserInstallation=${pathToFileURL(profileDirectory).href}`,
      `--infilter=${importFilter}`,
      "--convert-to",
      convertToArgument(exported),
      "--outdir",
      outputDirectory,
      inputPath,
    ],
    { stdio: "ignore" },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => killGroup(child.pid!), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(join(outputDirectory, `${basename(inputPath, extname(inputPath))}.${exported.extension}`));
      else reject(new Error(`soffice --convert-to ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}
