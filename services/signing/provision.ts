import { readFileSync } from "node:fs";
import { ConfigError, type PlatformConfig } from "../core/config.js";
import type { SigningConfig } from "./config.js";
import type { DataDir } from "../core/data-dir.js";
import type { Logger } from "../core/logger.js";
import { connectRedis } from "../core/redis-client.js";
import type { ConversionApi } from "../conversion/conversion-service.js";
import { watchCertificateExpiry } from "../core/certificate-expiry.js";
import { describeCertificate } from "./keys/certificate-description.js";
import { EmbeddedSignatureLedger } from "./ledger/embedded-signature-ledger.js";
import { loadLocalKeyFromFiles, loadOrCreateLocalKey, parsePemCertificates } from "./keys/local-key.js";
import { openPkcs11Key } from "./keys/pkcs11/pkcs11-key.js";
import { RedisSignatureLedger } from "./ledger/redis-signature-ledger.js";
import type { SignatureLedger } from "./ledger/signature-ledger.js";
import type { SigningKey } from "./keys/signing-key.js";
import { needsTimestampAuthority } from "./model.js";
import { exportSigningLoad } from "./signing-metrics.js";
import { SigningService } from "./signing-service.js";
import { SigningWorkers } from "./workers/signing-workers.js";

type SigningSettings = PlatformConfig & SigningConfig;

export interface ProvisionedSigning {
  service: SigningService;
  close(): Promise<void>;
}

const HEALTH_PROBE = Buffer.from("DocService signing health probe");

/** Builds SigningService from config: the key backend, the replay ledger (Redis or embedded) and the worker threads. */
export async function provisionSigning(config: SigningSettings, dataDir: DataDir, conversion: ConversionApi, logger: Logger): Promise<ProvisionedSigning> {
  const log = logger.child({ service: "signing" });
  const key = await openSigningKey(config, dataDir);
  const ledger: SignatureLedger = config.redisUrl
    ? new RedisSignatureLedger(connectRedis(config.redisUrl, log))
    : new EmbeddedSignatureLedger(dataDir.path("signatures"));
  const trustedRootsDer = config.signingTrustAnchorsFile
    ? parsePemCertificates(readFileSync(config.signingTrustAnchorsFile), config.signingTrustAnchorsFile)
    : [];
  const timestampAuthority = config.signingTsaUrl ? { url: config.signingTsaUrl, timeoutMs: config.signingTsaTimeoutMs } : undefined;
  const defaultLevel = config.signingLevel ?? (timestampAuthority ? "B-T" : "B-B");
  if (needsTimestampAuthority(defaultLevel) && !timestampAuthority) throw new ConfigError([`SIGNING_LEVEL=${defaultLevel} needs SIGNING_TSA_URL`]);
  const revocation = { timeoutMs: config.signingRevocationTimeoutMs, allowHosts: config.fetchAllowHosts, cacheMs: 5 * 60_000, knownCertificates: trustedRootsDer };
  const workers = new SigningWorkers(
    key,
    { size: config.signingWorkers, queueLimit: config.signingQueueLimit, trustedRootsDer, timestampAuthority, revocation },
    log,
  );
  exportSigningLoad(() => workers.load());
  const service = new SigningService({
    key,
    workers,
    ledger,
    conversion,
    // A signature proves the key (an HSM session) answers.
    health: async () => void (await key.sign(HEALTH_PROBE)),
    settings: {
      maxDocumentBytes: config.signingMaxBytes,
      metadataMaxBytes: config.signingMetadataMaxBytes,
      replayTtlMs: config.signingReplayTtlSeconds * 1000,
      fetch: { timeoutMs: config.fetchTimeoutMs, maxRedirects: 3, allowHosts: config.fetchAllowHosts },
      defaultLevel,
    },
  });
  const certificate = describeCertificate(key.certificateDer);
  watchCertificateExpiry("signing", () => key.certificateDer);
  log.info(
    { backend: config.signingKeyBackend, algorithm: key.algorithm, subject: certificate.subject, sha256: certificate.sha256, workers: config.signingWorkers, tsa: config.signingTsaUrl ?? "none" },
    "signing service ready",
  );
  return {
    service,
    close: async () => {
      await workers.close();
      await ledger.close();
      await key.close();
    },
  };
}

async function openSigningKey(config: SigningSettings, dataDir: DataDir): Promise<SigningKey> {
  const chainPem = config.signingChainFile ? readFileSync(config.signingChainFile) : undefined;
  if (config.signingKeyBackend === "pkcs11") {
    const missing = [
      ["PKCS11_MODULE", config.pkcs11Module],
      ["PKCS11_TOKEN_LABEL", config.pkcs11TokenLabel],
      ["PKCS11_KEY_LABEL", config.pkcs11KeyLabel],
      ["PKCS11_PIN_FILE or PKCS11_PIN", config.pkcs11PinFile ?? config.pkcs11Pin],
    ].filter(([, value]) => !value);
    if (missing.length > 0) throw new ConfigError(missing.map(([name]) => `${name}: required with SIGNING_KEY_BACKEND=pkcs11`));
    return openPkcs11Key({
      modulePath: config.pkcs11Module!,
      tokenLabel: config.pkcs11TokenLabel!,
      keyLabel: config.pkcs11KeyLabel!,
      pin: config.pkcs11PinFile ? readSecret(config.pkcs11PinFile) : config.pkcs11Pin!,
      poolSize: config.pkcs11Sessions,
      chainDer: chainPem && parsePemCertificates(chainPem, config.signingChainFile!),
    });
  }
  const passphrase = config.signingKeyPassphraseFile ? readSecret(config.signingKeyPassphraseFile) : undefined;
  if (config.signingPkcs12File) {
    return loadLocalKeyFromFiles({ pkcs12: readFileSync(config.signingPkcs12File), passphrase: passphrase ?? "", chainPem });
  }
  if (config.signingKeyFile || config.signingCertificateFile) {
    if (!config.signingKeyFile || !config.signingCertificateFile) {
      throw new ConfigError(["SIGNING_KEY_FILE and SIGNING_CERTIFICATE_FILE: give both, or neither to use a generated key"]);
    }
    return loadLocalKeyFromFiles({
      keyPem: readFileSync(config.signingKeyFile),
      certificatePem: readFileSync(config.signingCertificateFile),
      passphrase,
      chainPem,
    });
  }
  return loadOrCreateLocalKey(dataDir.path("signing"));
}

/** A secret file's content without the trailing newline editors and `echo` add. */
function readSecret(path: string): string {
  return readFileSync(path, "utf8").replace(/\r?\n$/, "");
}
