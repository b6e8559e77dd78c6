import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Option, type Command } from "commander";
import { addFileCommand, type FileCommandFlags } from "./file-command.js";
import { replaceExtension, writeOutput } from "./file-jobs.js";
import { answerOf } from "./platform-options.js";

const SOURCES = ["docx", "doc", "odt", "rtf", "txt", "html", "md"] as const;
type Source = (typeof SOURCES)[number];

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
    accepts: (name, flags) => (SOURCES as readonly string[]).includes(sourceOf(name)) && !(flags.to === "docx" && sourceOf(name) === "docx"),
    outputName: (name, flags) => replaceExtension(name, `.${flags.to}`),
    async run(client, job, flags) {
      const file = new File([new Uint8Array(await readFile(job.input))], basename(job.input));
      const query = { from: sourceOf(job.input) as Source, to: flags.to, ...(flags.pdfa ? { pdfa: flags.pdfa } : {}), ...(flags.pdfua ? { pdfua: "true" as const } : {}) };
      // the client sends a body holding a file as multipart; the answer is the file's bytes
      const output = await answerOf(client.POST("/v1/convert", { params: { query }, body: { file }, parseAs: "arrayBuffer" }));
      await writeOutput(job.output, Buffer.from(output));
      return `→ ${job.output}`;
    },
  });
}
