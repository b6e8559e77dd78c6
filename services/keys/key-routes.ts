import type { KeyInfo } from "../../gen/ts-proto/docservice/v1/keys.js";
import type { KeyServiceApi } from "./key-service.js";
import { queryValue, queryValues, type Route } from "../contracts/route.js";

const keyInfoSchema = {
  type: "object",
  required: ["keyId", "displayPrefix", "maskedEmail", "createdAt"],
  properties: {
    keyId: { type: "string", description: "Hex SHA-256 of the key: its stable identifier." },
    displayPrefix: { type: "string", description: "First characters of the key, e.g. dsk_AbC123." },
    maskedEmail: { type: "string", description: "Owner's address, mostly masked." },
    createdAt: { type: "string", format: "date-time" },
  },
};

function keyInfoJson(key: KeyInfo | undefined) {
  return {
    keyId: key?.keyId,
    displayPrefix: key?.displayPrefix,
    maskedEmail: key?.maskedEmail,
    createdAt: key?.createdAt?.toISOString(),
  };
}

const emailParameter = {
  name: "email",
  description: "The address to send the code to / that received it.",
  required: true,
  schema: { type: "string", format: "email", maxLength: 254 },
};
const rateLimited = "Too many attempts for this address or client; see Retry-After.";
const unavailable = "A dependency (store, mail server, key service) is down; see Retry-After.";

/** /v1/auth/*: e-mail registration, key issuance, key description and revocation. */
export function keyRoutes(keys: KeyServiceApi): Route[] {
  return [
    {
      method: "GET",
      path: "/v1/auth/register",
      operationId: "register",
      summary: "E-mail a one-time 6-digit code to the address. The answer is the same for known and unknown addresses.",
      query: [emailParameter],
      successStatus: 200,
      responseSchema: {
        type: "object",
        required: ["message", "expiresInSeconds"],
        properties: { message: { type: "string" }, expiresInSeconds: { type: "integer" } },
      },
      errors: { 400: "The address is missing or not valid.", 429: rateLimited, 503: unavailable },
      async handle(context) {
        const response = await keys.register({ email: queryValue(context, "email"), clientIp: context.clientIp });
        return { status: 200, body: { message: response.message, expiresInSeconds: response.expiresInSeconds } };
      },
    },
    {
      method: "GET",
      path: "/v1/auth/verify",
      operationId: "verify",
      summary: "Exchange the code for a new API key. The key is in this response only; it is never shown again.",
      query: [emailParameter, { name: "code", description: "The 6-digit code from the e-mail.", required: true, schema: { type: "string", pattern: "^[0-9]{6}$" } }],
      successStatus: 200,
      responseSchema: {
        type: "object",
        required: ["apiKey", "key"],
        properties: {
          apiKey: { type: "string", pattern: "^dsk_[0-9A-Za-z]{38}$", description: "Use as `Authorization: Bearer <apiKey>`." },
          key: keyInfoSchema,
        },
      },
      errors: {
        400: "The address or the code is malformed.",
        401: "The code is wrong, expired, already used, or dead after too many wrong attempts.",
        429: rateLimited,
        503: unavailable,
      },
      async handle(context) {
        const { email, code } = queryValues(context, ["email", "code"]);
        const response = await keys.verify({ email, code, clientIp: context.clientIp });
        return { status: 200, body: { apiKey: response.apiKey, key: keyInfoJson(response.key) } };
      },
    },
    {
      method: "GET",
      path: "/v1/auth/key",
      operationId: "getKeyInfo",
      summary: "Describe the API key presented in the Authorization header.",
      successStatus: 200,
      responseSchema: keyInfoSchema,
      errors: { 401: "The API key is missing, malformed or revoked.", 503: unavailable },
      async handle(context) {
        const response = await keys.getKeyInfo({ apiKey: context.apiKey! });
        return { status: 200, body: keyInfoJson(response.key) };
      },
    },
    {
      method: "DELETE",
      path: "/v1/auth/key",
      operationId: "revokeKey",
      summary: "Revoke the API key presented in the Authorization header. It stops working at once on this gateway, and everywhere within the authentication cache TTL.",
      successStatus: 200,
      responseSchema: { type: "object", required: ["revoked"], properties: { revoked: { type: "integer" } } },
      errors: { 401: "The API key is missing, malformed or revoked.", 503: unavailable },
      async handle(context) {
        const response = await keys.revoke({ apiKey: context.apiKey! });
        return { status: 200, body: { revoked: response.revokedCount } };
      },
    },
  ];
}
