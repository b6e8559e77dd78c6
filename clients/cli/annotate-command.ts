import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { Option, type Command } from "commander";
import { addFileCommand, type FileCommandFlags } from "./file-command.js";
import { replaceExtension, writeOutput } from "./file-jobs.js";
import { answerOf } from "./platform-options.js";

interface AnnotateFlags extends FileCommandFlags {
  fields: string;
  to: "docx" | "pdf";
}

const FILLED = ".filled";

/** The `fields` array of /v1/annotate from a JSON file: the array itself, or an object holding it. */
function readFields(path: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`--fields ${path}: ${(error as Error).message}`);
  }
  const fields = Array.isArray(parsed) ? parsed : (parsed as { fields?: unknown })?.fields;
  if (!Array.isArray(fields)) throw new Error(`--fields ${path}: expected a JSON array of fields, or {"fields": [...]}`);
  return fields;
}

/** docservice annotate: DOCX templates filled with one set of fields by /v1/annotate, as NAME.filled.docx (or .pdf). */
export function addAnnotateCommand(program: Command): void {
  let fields: unknown[] = [];
  addFileCommand<AnnotateFlags>(program, {
    name: "annotate",
    description: `fill DOCX templates (their content controls) with the fields of a JSON file; each result is written as NAME${FILLED}.docx or .pdf`,
    capacity: "convert",
    options: [
      new Option("--fields <file>", 'JSON: the fields array of /v1/annotate, e.g. [{"id": "customer", "type": "text", "value": "Ada"}]').makeOptionMandatory(),
      new Option("--to <format>", "output format").choices(["docx", "pdf"]).default("docx"),
    ],
    accepts: (name) => extname(name).toLowerCase() === ".docx" && !name.toLowerCase().endsWith(`${FILLED}.docx`),
    outputName: (name, flags) => replaceExtension(name, `${FILLED}.${flags.to}`),
    prepare: (flags) => {
      fields = readFields(flags.fields);
      return [flags.fields];
    },
    async run(client, job, flags) {
      const answer = await answerOf(
        client.POST("/v1/annotate", {
          params: { query: { to: flags.to } },
          // the fields file is the platform's to judge: a field it does not take is a 400 naming it
          body: { document: { base64: (await readFile(job.input)).toString("base64") }, fields: fields as never },
        }),
      );
      await writeOutput(job.output, Buffer.from(answer.document.base64, "base64"));
      return `→ ${job.output}`;
    },
  });
}
