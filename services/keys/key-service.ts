import { LRUCache } from "lru-cache";
import type {
  AuthenticateRequest,
  AuthenticateResponse,
  GetKeyInfoRequest,
  GetKeyInfoResponse,
  KeyInfo,
  KeyServiceService,
  KeyServiceVerifyRequest,
  KeyServiceVerifyResponse,
  RegisterRequest,
  RegisterResponse,
  RevokeRequest,
  RevokeResponse,
} from "../../gen/ts-proto/docservice/v1/keys.js";
import { ServiceError, validationError, type FieldIssue } from "../core/errors.js";
import type { Mailer } from "./mail/mailer.js";
import type { UnaryApi } from "../grpc/unary-api.js";
import { displayPrefixOf, generateApiKey, isWellFormedApiKey, keyIdOf } from "./api-key.js";
import { maskEmail, normalizeEmail } from "../core/email-address.js";
import type { ApiKeyRecord, KeyStore } from "./key-store.js";
import { CODE_PATTERN, generateCode, hashCode, hashesEqual } from "./one-time-code.js";
import type { RateLimits } from "./rate-limits.js";

export type KeyServiceApi = UnaryApi<typeof KeyServiceService>;

export interface KeyServiceSettings {
  codeTtlSeconds: number;
  codeMaxAttempts: number;
  codePepper: string;
  authCacheTtlMs: number;
}

export interface KeyServiceDeps {
  store: KeyStore;
  mailer: Mailer;
  limits: RateLimits;
  settings: KeyServiceSettings;
  /** Epoch milliseconds; injectable so tests can expire codes without sleeping. */
  now?: () => number;
}

const invalidCode = () => new ServiceError("INVALID_CODE", "The code is wrong, expired or already used. Request a new one.");
const invalidKey = () => new ServiceError("UNAUTHENTICATED", "The API key is missing, malformed or revoked.");

export class KeyService implements KeyServiceApi {
  private readonly store: KeyStore;
  private readonly mailer: Mailer;
  private readonly limits: RateLimits;
  private readonly settings: KeyServiceSettings;
  private readonly now: () => number;
  /**
   * Positive authentications only, keyed by the key as presented so a hit costs
   * no hashing (the key is in this process's memory with every request anyway).
   * Revocation clears this process's entries at once, other replicas' within the TTL.
   */
  private readonly authCache: LRUCache<string, ApiKeyRecord> | undefined;

  constructor(deps: KeyServiceDeps) {
    this.store = deps.store;
    this.mailer = deps.mailer;
    this.limits = deps.limits;
    this.settings = deps.settings;
    this.now = deps.now ?? Date.now;
    const ttl = deps.settings.authCacheTtlMs;
    this.authCache = ttl > 0 ? new LRUCache({ max: 100_000, ttl }) : undefined;
  }

  /** Known and unknown addresses take the same path, so neither the answer nor its timing tells them apart. */
  async register(request: RegisterRequest): Promise<RegisterResponse> {
    const email = requireEmail(request.email, []);
    await this.limits.consume("registerPerIp", request.clientIp);
    await this.limits.consume("registerPerEmail", email);
    const code = generateCode();
    const ttl = this.settings.codeTtlSeconds;
    await this.store.saveCode(
      email,
      { codeHash: hashCode(this.settings.codePepper, email, code), expiresAt: this.now() + ttl * 1000 },
      ttl * 1000,
    );
    await this.mailer.send({
      to: email,
      subject: `Your DocService verification code: ${code}`,
      text: `Your DocService verification code is ${code}.\n\nIt expires in ${Math.round(ttl / 60)} minutes and works once. If you did not ask for it, ignore this e-mail.\n`,
    });
    return { message: "A verification code has been sent to the address.", expiresInSeconds: ttl };
  }

  async verify(request: KeyServiceVerifyRequest): Promise<KeyServiceVerifyResponse> {
    const problems: FieldIssue[] = [];
    if (!CODE_PATTERN.test(request.code)) problems.push({ field: "code", issue: "must be the 6 digits from the e-mail" });
    const email = requireEmail(request.email, problems);
    await this.limits.consume("verifyPerIp", request.clientIp);
    await this.limits.consume("verifyPerEmail", email);

    // The attempt is counted before the comparison, so parallel guesses cannot exceed the limit.
    const attempt = await this.store.recordAttempt(email);
    if (!attempt) throw invalidCode();
    const { code, attempts } = attempt;
    const expired = this.now() >= code.expiresAt;
    const exhausted = attempts > this.settings.codeMaxAttempts;
    const matches = hashesEqual(hashCode(this.settings.codePepper, email, request.code), code.codeHash);
    if (expired || exhausted || !matches) {
      if (expired || attempts >= this.settings.codeMaxAttempts) await this.store.consumeCode(email, code.codeHash);
      throw invalidCode();
    }
    // Single use: of two concurrent correct attempts only the one that deletes the code gets a key.
    if (!(await this.store.consumeCode(email, code.codeHash))) throw invalidCode();

    const apiKey = generateApiKey();
    const record: ApiKeyRecord = {
      keyId: keyIdOf(apiKey),
      displayPrefix: displayPrefixOf(apiKey),
      email,
      createdAt: this.now(),
    };
    await this.store.saveKey(record);
    return { apiKey, key: keyInfo(record) };
  }

  async authenticate(request: AuthenticateRequest): Promise<AuthenticateResponse> {
    const record = await this.resolve(request.apiKey);
    return {
      principal: {
        keyId: record.keyId,
        email: record.email,
        displayPrefix: record.displayPrefix,
        createdAt: new Date(record.createdAt),
      },
    };
  }

  async revoke(request: RevokeRequest): Promise<RevokeResponse> {
    let revoked: string[];
    if (request.apiKey !== undefined) {
      revoked = isWellFormedApiKey(request.apiKey) ? await this.store.deleteKey(keyIdOf(request.apiKey)) : [];
    } else if (request.email !== undefined) {
      revoked = await this.store.deleteKeysOf(requireEmail(request.email, []));
    } else {
      throw validationError([{ field: "target", issue: "set apiKey or email" }]);
    }
    this.forget(new Set(revoked));
    return { revokedCount: revoked.length };
  }

  async getKeyInfo(request: GetKeyInfoRequest): Promise<GetKeyInfoResponse> {
    return { key: keyInfo(await this.resolve(request.apiKey)) };
  }

  /** Throws when the store cannot serve requests. */
  health(): Promise<void> {
    return this.store.ping();
  }

  private async resolve(apiKey: string): Promise<ApiKeyRecord> {
    const cached = this.authCache?.get(apiKey);
    if (cached) return cached;
    if (!isWellFormedApiKey(apiKey)) throw invalidKey();
    const record = await this.store.findKey(keyIdOf(apiKey));
    if (!record) throw invalidKey();
    this.authCache?.set(apiKey, record);
    return record;
  }

  private forget(keyIds: Set<string>): void {
    if (!this.authCache || keyIds.size === 0) return;
    const stale = [...this.authCache.entries()].filter(([, record]) => keyIds.has(record.keyId)).map(([apiKey]) => apiKey);
    for (const apiKey of stale) this.authCache.delete(apiKey);
  }
}

/** The normalized address; otherwise a VALIDATION_ERROR listing it with any problems found before. */
function requireEmail(input: string, problems: FieldIssue[]): string {
  const email = normalizeEmail(input);
  if (!email) problems.push({ field: "email", issue: input ? "is not a valid e-mail address" : "is required" });
  if (problems.length > 0) throw validationError(problems);
  return email!;
}

function keyInfo(record: ApiKeyRecord): KeyInfo {
  return {
    keyId: record.keyId,
    displayPrefix: record.displayPrefix,
    maskedEmail: maskEmail(record.email),
    createdAt: new Date(record.createdAt),
  };
}
