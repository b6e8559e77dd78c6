import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { homedir, availableParallelism } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { VARIABLES, loadConfig } from "./configuration.js";
import { ConfigError } from "./core/config.js";

/** The ConfigError loadConfig throws for this environment. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe("loadConfig defaults", () => {
  test("an empty environment gives the documented defaults", () => {
    const config = loadConfig({});
    assert.deepEqual(config, {
      port: 8080,
      host: "0.0.0.0",
      metricsPort: undefined,
      grpcHost: "127.0.0.1",
      grpcPort: "auto",
      grpcTlsCertFile: undefined,
      grpcTlsKeyFile: undefined,
      grpcTlsCaFile: undefined,
      grpcTlsReloadMs: 60000,
      grpcGatewayNames: ["docservice-gateway"],
      internalToken: undefined,
      dataDir: "./.data",
      logLevel: "info",
      metricsToken: undefined,
      adminToken: undefined,
      trustProxy: false,
      shutdownDrainMs: 0,
      shutdownTimeoutMs: 10000,
      headersTimeoutMs: 10000,
      requestTimeoutMs: 300000,
      keepAliveTimeoutMs: 5000,
      minBodyBytesPerSecond: 1024,
      maxConnections: config.maxConnections,
      maxConnectionsPerClient: 512,
      memoryBudgetMb: undefined,
      grpcMaxConnectionIdleMs: 300000,
      grpcMaxConnectionAgeMs: 1800000,
      grpcMaxConnectionAgeGraceMs: 120000,
      grpcMaxConcurrentStreams: 1024,
      keysServiceAddress: undefined,
      backendTimeoutMs: 10000,
      redisUrl: undefined,
      smtpHost: undefined,
      smtpPort: 587,
      smtpSecure: false,
      smtpUser: undefined,
      smtpPassword: undefined,
      mailFrom: "DocService <no-reply@docservice.local>",
      codeTtlSeconds: 900,
      codeMaxAttempts: 5,
      codePepper: undefined,
      authCacheTtlMs: 10000,
      registerRatePerEmail: { points: 5, seconds: 3600 },
      registerRatePerIp: { points: 20, seconds: 3600 },
      verifyRatePerEmail: { points: 10, seconds: 900 },
      verifyRatePerIp: { points: 30, seconds: 900 },
      conversionBackend: "local",
      gotenbergUrl: undefined,
      conversionPoolSize: availableParallelism(),
      conversionTimeoutMs: 60000,
      conversionQueueLimit: 64,
      conversionMemoryLimitMb: 1024,
      conversionMaxBytes: 25 * 1024 * 1024,
      conversionMaxUnpackedBytes: 256 * 1024 * 1024,
      cacheDir: join(homedir(), ".cache/docservice"),
      unoserverBin: undefined,
      conversionServiceAddress: undefined,
      signingKeyBackend: "local",
      signingKeyFile: undefined,
      signingCertificateFile: undefined,
      signingPkcs12File: undefined,
      signingKeyPassphraseFile: undefined,
      signingChainFile: undefined,
      pkcs11Module: undefined,
      pkcs11TokenLabel: undefined,
      pkcs11KeyLabel: undefined,
      pkcs11PinFile: undefined,
      pkcs11Pin: undefined,
      pkcs11Sessions: 4,
      signingWorkers: availableParallelism(),
      signingQueueLimit: 64,
      signingMaxBytes: 25 * 1024 * 1024,
      signingMetadataMaxBytes: 16384,
      signingReplayTtlSeconds: 86400,
      signingTrustAnchorsFile: undefined,
      signingTsaUrl: undefined,
      signingTsaTimeoutMs: 10000,
      signingLevel: undefined,
      signingRevocationTimeoutMs: 10000,
      fetchAllowHosts: [],
      fetchTimeoutMs: 10000,
      signingServiceAddress: undefined,
      kafkaBrokers: [],
      telemetryTopic: "docservice.usage.v1",
      telemetryConsumerGroup: "docservice-usage-aggregator",
      telemetryDirectTimeoutMs: 1000,
      telemetrySpoolHandOverMs: 10000,
      telemetrySpoolMaxBytes: 1024 * 1024 * 1024,
      telemetryServiceAddress: undefined,
    });
  });

  test("document fetch allow-list: comma-separated hosts, blanks ignored", () => {
    assert.deepEqual(loadConfig({ DOCUMENT_FETCH_ALLOW_HOSTS: " files.internal, 127.0.0.1:8081,,[::1]:9000 " }).fetchAllowHosts, [
      "files.internal",
      "127.0.0.1:8081",
      "[::1]:9000",
    ]);
  });

  test("HTTP_MAX_CONNECTIONS auto is half the open-file limit, and a number is taken as is", () => {
    const openFiles = Number(/^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))![1]);
    assert.equal(loadConfig({}).maxConnections, Math.floor(openFiles / 2));
    assert.equal(loadConfig({ HTTP_MAX_CONNECTIONS: "300" }).maxConnections, 300);
  });

  test("the pool size is a number of instances or auto", () => {
    assert.equal(loadConfig({ CONVERSION_POOL_SIZE: "3" }).conversionPoolSize, 3);
    assert.throws(() => loadConfig({ CONVERSION_POOL_SIZE: "0" }), /CONVERSION_POOL_SIZE/);
    assert.throws(() => loadConfig({ CONVERSION_POOL_SIZE: "many" }), /CONVERSION_POOL_SIZE/);
  });

  test("every variable has a unique upper-case name and a description", () => {
    const names = Object.values(VARIABLES).map((v) => v.name);
    assert.equal(new Set(names).size, names.length);
    for (const v of Object.values(VARIABLES)) {
      assert.match(v.name, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(v.doc.length > 0, v.name);
    }
  });

  test("does not read process.env when an environment is given", () => {
    const saved = process.env.PORT;
    process.env.PORT = "1234";
    try {
      assert.equal(loadConfig({}).port, 8080);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });
});

describe("loadConfig parsing", () => {
  test("values from the environment are parsed", () => {
    const config = loadConfig({
      PORT: "9000",
      GRPC_PORT: "0",
      DOCSERVICE_DATA_DIR: "/var/lib/docservice",
      LOG_LEVEL: "debug",
      DOCSERVICE_ADMIN_TOKEN: "0123456789abcdef",
      REDIS_URL: "rediss://user:pw@redis.internal:6380/2",
      SMTP_PORT: "465",
      KEYS_AUTH_CACHE_TTL_MS: "0",
      RATE_LIMIT_REGISTER_PER_EMAIL: "2/60",
    });
    assert.equal(config.port, 9000);
    assert.equal(config.grpcPort, 0);
    assert.equal(config.dataDir, "/var/lib/docservice");
    assert.equal(config.logLevel, "debug");
    assert.equal(config.adminToken, "0123456789abcdef");
    assert.equal(config.redisUrl, "rediss://user:pw@redis.internal:6380/2");
    assert.equal(config.smtpPort, 465);
    assert.equal(config.authCacheTtlMs, 0);
    assert.deepEqual(config.registerRatePerEmail, { points: 2, seconds: 60 });
  });

  test("an empty string counts as unset for variables without a default", () => {
    const config = loadConfig({ REDIS_URL: "", DOCSERVICE_ADMIN_TOKEN: "", SMTP_HOST: "", KEYS_CODE_PEPPER: "", KEYS_SERVICE_ADDR: "" });
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.adminToken, undefined);
    assert.equal(config.smtpHost, undefined);
    assert.equal(config.codePepper, undefined);
    assert.equal(config.keysServiceAddress, undefined);
  });

  test(
    "an empty or blank value counts as unset for variables with a default",
    () => {
      const config = loadConfig({ PORT: "", TRUST_PROXY: " ", RATE_LIMIT_VERIFY_PER_IP: "", LOG_LEVEL: "" });
      assert.equal(config.port, 8080);
      assert.equal(config.trustProxy, false);
      assert.equal(config.logLevel, "info");
      assert.deepEqual(config.verifyRatePerIp, { points: 30, seconds: 900 });
    },
  );

  test("booleans accept true/false/1/0 only", () => {
    assert.equal(loadConfig({ TRUST_PROXY: "true" }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: "1" }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: "false" }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: "0" }).trustProxy, false);
    assert.equal(loadConfig({ SMTP_SECURE: "1" }).smtpSecure, true);
    for (const bad of ["yes", "no", "TRUE", "False", "on", "2", " true"]) {
      const error = configError({ TRUST_PROXY: bad });
      assert.equal(error.problems.length, 1, bad);
      assert.match(error.problems[0], /^TRUST_PROXY=/, bad);
    }
  });
});

describe("loadConfig errors", () => {
  const cases: [string, string][] = [
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "-1"],
    ["PORT", "80.5"],
    ["GRPC_PORT", "x"],
    ["RATE_LIMIT_VERIFY_PER_IP", "5"],
    ["RATE_LIMIT_REGISTER_PER_EMAIL", "0/60"],
    ["RATE_LIMIT_REGISTER_PER_IP", "5/0"],
    ["RATE_LIMIT_VERIFY_PER_EMAIL", "5/60s"],
    ["LOG_LEVEL", "verbose"],
    ["KEYS_CODE_TTL_SECONDS", "0"],
    ["KEYS_CODE_MAX_ATTEMPTS", "-3"],
    ["KEYS_AUTH_CACHE_TTL_MS", "-1"],
    ["SHUTDOWN_TIMEOUT_MS", "soon"],
  ];
  for (const [name, value] of cases) {
    test(`${name}=${value} is a ConfigError naming the variable`, () => {
      const error = configError({ [name]: value });
      assert.equal(error.name, "ConfigError");
      assert.equal(error.problems.length, 1, error.message);
      assert.ok(error.problems[0].startsWith(`${name}=${JSON.stringify(value)}:`), error.problems[0]);
      assert.ok(error.message.includes(name), error.message);
    });
  }

  const secrets: [string, string][] = [
    ["DOCSERVICE_ADMIN_TOKEN", "short-admin"],
    ["KEYS_CODE_PEPPER", "tooshort"],
    ["DOCSERVICE_INTERNAL_TOKEN", "not-32-characters-long"],
    ["REDIS_URL", "http://:hunter2-password@redis:6379"],
    ["REDIS_URL", "not a url hunter2"],
  ];
  for (const [name, value] of secrets) {
    test(`${name}: a bad secret is named with its rule, never shown`, () => {
      const error = configError({ [name]: value });
      assert.equal(error.problems.length, 1, error.message);
      assert.match(error.problems[0], new RegExp(`^${name}: \\S`));
      assert.ok(!error.message.includes(value), error.message);
      for (const part of value.split(/[^\w-]+/).filter((p) => p.length >= 5)) assert.ok(!error.message.includes(part), `${part} in ${error.message}`);
    });
  }

  test("the gRPC TLS files come all three or none", () => {
    assert.equal(loadConfig({ GRPC_TLS_CERT_FILE: "/c", GRPC_TLS_KEY_FILE: "/k", GRPC_TLS_CA_FILE: "/ca" }).grpcTlsCaFile, "/ca");
    const error = configError({ GRPC_TLS_CERT_FILE: "/c", GRPC_TLS_KEY_FILE: "/k" });
    assert.match(error.problems[0], /set all three .* \(only GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE is set\)/);
  });

  test("a removed variable stops the start with why, instead of being ignored", () => {
    const error = configError({ TELEMETRY_DEDUPE_WINDOW_SECONDS: "86400" });
    assert.deepEqual(error.problems, ["TELEMETRY_DEDUPE_WINDOW_SECONDS: no longer used: usage from Kafka is applied once by its offsets, without remembering events; remove it"]);
  });

  test("GRPC_PORT is auto or a port", () => {
    assert.equal(loadConfig({ GRPC_PORT: "50099" }).grpcPort, 50099);
    assert.equal(loadConfig({ GRPC_PORT: "auto" }).grpcPort, "auto");
  });

  test("every bad value is reported at once", () => {
    const error = configError({
      PORT: "abc",
      REDIS_URL: "http://x",
      RATE_LIMIT_VERIFY_PER_IP: "5",
      LOG_LEVEL: "loud",
      HOST: "localhost",
    });
    const named = error.problems.map((p) => /^[A-Z_]+/.exec(p)![0]);
    assert.deepEqual(named.sort(), ["LOG_LEVEL", "PORT", "RATE_LIMIT_VERIFY_PER_IP", "REDIS_URL"]);
    for (const name of named) assert.ok(error.message.includes(`  - ${name}`), error.message);
    assert.match(error.message, /^Invalid configuration:\n/);
  });
});
