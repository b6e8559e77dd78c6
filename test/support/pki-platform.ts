import { startPlatform, type Platform } from "./platform.js";
import { startTestPki, type TestPki } from "./test-pki.js";
import { startTestTsa, type TestTsa } from "./tsa.js";

export interface PkiPlatform {
  pki: TestPki;
  tsa: TestTsa;
  platform: Platform;
  /** Stops the platform, then the TSA and the PKI's servers. */
  stop(): Promise<void>;
}

/**
 * The embedded platform signing as a user with a real PKI runs it: signer A's
 * key and chain from the test PKI, the PKI's root as trust anchor, the PKI's
 * TSA, and its OCSP and CRL servers on loopback let through
 * (DOCUMENT_FETCH_ALLOW_HOSTS), so B-LT and B-LTA work; `env` adds to that.
 */
export async function startPkiPlatform(env: Record<string, string>): Promise<PkiPlatform> {
  const pki = await startTestPki();
  const tsa = await startTestTsa({ signer: pki.tsa }).catch(async (error) => {
    await pki.stop();
    throw error;
  });
  const platform = await startPlatform({
    SIGNING_KEY_FILE: pki.signerA.key,
    SIGNING_CERTIFICATE_FILE: pki.signerA.cert,
    SIGNING_CHAIN_FILE: pki.signerA.chain,
    SIGNING_TSA_URL: tsa.url,
    SIGNING_TRUST_ANCHORS: pki.root.cert,
    DOCUMENT_FETCH_ALLOW_HOSTS: "127.0.0.1",
    ...env,
  }).catch(async (error) => {
    await tsa.stop();
    await pki.stop();
    throw error;
  });
  return {
    pki,
    tsa,
    platform,
    stop: async () => {
      await platform.stop();
      await tsa.stop();
      await pki.stop();
    },
  };
}
