/**
 * docservice: the command line of a DocService platform. Converts, signs,
 * verifies and fills (annotate) whole folders against a running platform (bounded concurrency,
 * progress, results mirrored under --out, resumable), and gets an API key by
 * e-mail. `npx docservice --help` lists the commands.
 */
import { Command, CommanderError } from "commander";
import manifest from "./package.json" with { type: "json" };
import { addAnnotateCommand } from "./annotate-command.js";
import { addConvertCommand } from "./convert-command.js";
import { addKeysCommand } from "./keys-command.js";
import { addSignCommand } from "./sign-command.js";
import { addVerifyCommand } from "./verify-command.js";

const program = new Command("docservice").description("DocService from the command line: convert, sign, verify and fill documents, get an API key").version(manifest.version).exitOverride();
addConvertCommand(program);
addSignCommand(program);
addVerifyCommand(program);
addAnnotateCommand(program);
addKeysCommand(program);

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode;
  else {
    process.stderr.write(`docservice: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
