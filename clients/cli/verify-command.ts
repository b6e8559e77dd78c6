import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { Command } from "commander";
import { addFileCommand, type FileCommandFlags } from "./file-command.js";
import { replaceExtension, writeOutput } from "./file-jobs.js";
import { answerOf } from "./platform-options.js";

/**
 * docservice verify: each signed PDF checked by /v1/verify; the answer is
 * written as NAME.verify.json (under --out, or beside the PDF), and a PDF
 * whose signatures do not hold fails the run.
 */
export function addVerifyCommand(program: Command): void {
  addFileCommand<FileCommandFlags>(program, {
    name: "verify",
    description: "check the signatures of PDFs; each answer is written as NAME.verify.json, and an invalid PDF makes the exit code 1",
    capacity: "sign",
    accepts: (name) => extname(name).toLowerCase() === ".pdf",
    outputName: (name) => replaceExtension(name, ".verify.json"),
    async run(client, job) {
      const answer = await answerOf(client.POST("/v1/verify", { body: { document: { base64: (await readFile(job.input)).toString("base64") } } }));
      if (!answer.valid) throw new Error(`not valid: ${answer.reason}`);
      await writeOutput(job.output, `${JSON.stringify(answer, null, 2)}\n`);
      return `valid: ${answer.signers.map((s) => `${s.name ?? "?"}${s.indication ? ` (${s.indication})` : ""}`).join(", ")}`;
    },
  });
}
