import type { Command } from "commander";
import { answerOf, platformClient, withPlatformOptions, type PlatformFlags } from "./platform-options.js";

/** docservice keys register|verify: the e-mail flow that issues an API key. */
export function addKeysCommand(program: Command): void {
  const keys = program.command("keys").description("get an API key by e-mail");
  withPlatformOptions(keys.command("register").description("send a verification code to an e-mail address").requiredOption("--email <address>", "where the code goes"), false).action(
    async (flags: PlatformFlags & { email: string }) => {
      const answer = await answerOf(platformClient(flags, false).GET("/v1/auth/register", { params: { query: { email: flags.email } } }));
      process.stderr.write(`${answer.message}\nthen: docservice keys verify --email ${flags.email} --code CODE\n`);
    },
  );
  withPlatformOptions(
    keys.command("verify").description("exchange the code for the API key, printed once on stdout").requiredOption("--email <address>").requiredOption("--code <code>", "the code from the e-mail"),
    false,
  ).action(async (flags: PlatformFlags & { email: string; code: string }) => {
    const answer = await answerOf(platformClient(flags, false).GET("/v1/auth/verify", { params: { query: { email: flags.email, code: flags.code } } }));
    process.stdout.write(`${answer.apiKey}\n`);
    process.stderr.write("keep it: it is shown only this once (export DOCSERVICE_API_KEY=…)\n");
  });
}
