import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { Option, type Command } from "commander";
import { addFileCommand, type FileCommandFlags } from "./file-command.js";
import { replaceExtension, writeOutput } from "./file-jobs.js";
import { answerOf } from "./platform-options.js";
import { SignClaims } from "./sign-claim.js";

const SIGNED = ".signed.pdf";

interface SignFlags extends FileCommandFlags {
  signerName: string;
  signerEmail: string;
  level?: "B-B" | "B-T" | "B-LT" | "B-LTA";
  certificatePage: boolean;
}

/** docservice sign: each PDF (or DOCX, converted by the platform) signed by /v1/sign as NAME.signed.pdf. */
export function addSignCommand(program: Command): void {
  addFileCommand<SignFlags>(program, {
    name: "sign",
    description: `sign PDF and DOCX documents; each result is written as NAME${SIGNED}`,
    capacity: "sign",
    options: [
      new Option("--signer-name <name>", "the signer's name, on the signature and its certificate page").makeOptionMandatory(),
      new Option("--signer-email <email>", "the signer's e-mail address").makeOptionMandatory(),
      new Option("--level <level>", "PAdES level (default: the platform's SIGNING_LEVEL)").choices(["B-B", "B-T", "B-LT", "B-LTA"]),
      new Option("--no-certificate-page", "no audit-trail certificate page"),
    ],
    accepts: (name) => [".pdf", ".docx"].includes(extname(name).toLowerCase()) && !name.toLowerCase().endsWith(SIGNED),
    outputName: (name) => replaceExtension(name, SIGNED),
    async run(client, job, flags) {
      const document = await readFile(job.input);
      const options = { signer: { name: flags.signerName, email: flags.signerEmail }, certificate: { enabled: flags.certificatePage }, ...(flags.level ? { level: flags.level } : {}) };
      const claims = new SignClaims(job.output);
      const claim = await claims.take(document, options);
      const answer = await answerOf(
        client.POST("/v1/sign", {
          body: {
            document: { base64: document.toString("base64") },
            ...options,
            // what this run saw of the signer: they submitted the document by running the command
            auditTrail: [{ type: "submit", timestamp: claim.submittedAt }],
            eventId: claim.eventId,
          },
        }),
      );
      await writeOutput(job.output, Buffer.from(answer.document.base64, "base64"));
      await claims.release();
      return `→ ${job.output}`;
    },
  });
}
