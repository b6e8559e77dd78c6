import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Option, type Command } from "commander";
import { addFileCommand, type FileCommandFlags } from "./file-command.js";
import { replaceExtension, writeOutput } from "./file-jobs.js";

const SOURCES = ["docx", "doc", "odt", "rtf", "txt", "html", "md"];

interface ConvertFlags extends FileCommandFlags {
  to: "pdf" | "docx";
  pdfa?: "2b" | "3b";
  pdfua: boolean;
}

const sourceOf = (name: string) => extname(name).slice(1).toLowerCase().replace(/^htm$/, "html").replace(/^markdown$/, "md");

/** docservice convert: each document to PDF (PDF/A, PDF/UA) or DOCX through /v1/convert. */
export function addConvertCommand(program: Command): void {
  addFileCommand<ConvertFlags>(program, {
    name: "convert",
    description: `convert documents (${SOURCES.join(", ")}) to PDF or DOCX`,
    capacity: "convert",
    options: [
      new Option("--to <format>", "output format").choices(["pdf", "docx"]).default("pdf"),
      new Option("--pdfa <level>", "PDF/A conformance of the PDF").choices(["2b", "3b"]),
      new Option("--pdfua", "a tagged, accessible PDF/UA").default(false),
    ],
    accepts: (name, flags) => SOURCES.includes(sourceOf(name)) && !(flags.to === "docx" && sourceOf(name) === "docx"),
    outputName: (name, flags) => replaceExtension(name, `.${flags.to}`),
    async run(client, job, flags) {
      const query = new URLSearchParams({ from: sourceOf(job.input), to: flags.to });
      if (flags.pdfa) query.set("pdfa", flags.pdfa);
      if (flags.pdfua) query.set("pdfua", "true");
      const output = await client.upload(`/v1/convert?${query}`, await readFile(job.input), basename(job.input));
      await writeOutput(job.output, output);
      return `→ ${job.output}`;
    },
  });
}
