import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SignerReport, SigningServiceVerifyResponse } from "../../../gen/ts-proto/docservice/v1/signing.js";
import { verificationOf, verifyResponse } from "./verification-answers.js";
import { pdfVerificationSchema, type PdfVerification, type SignatureReport } from "./verification-result.js";

const intact: SignatureReport = {
  name: "Zoë Ünal",
  email: "zoe@example.com",
  signedAt: "2025-03-04T05:06:07.000Z",
  certificateFingerprint: "ab".repeat(32),
  subFilter: "ETSI.CAdES.detached",
  coversWholeDocument: false,
  timestamped: true,
  intact: true,
  kind: "signature",
  revision: 1,
  laterChangesPermitted: true,
  level: "B-T",
  indication: "INDETERMINATE",
  subIndication: "NO_CERTIFICATE_CHAIN_FOUND",
  timestampTime: "2025-03-04T05:06:08.000Z",
  timestampAuthority: "Test TSA",
  revocation: "not checked",
};
const broken: SignatureReport = { ...intact, intact: false, problem: "it was changed after signing", revision: 2, coversWholeDocument: true };
const verification: PdfVerification = {
  valid: false,
  reason: "Signature 2 does not match the document: it was changed after signing.",
  signers: [intact, broken],
  document: { sha256: "cd".repeat(32), pages: 3 },
};

const overTheWire = (response: SigningServiceVerifyResponse) =>
  SigningServiceVerifyResponse.decode(SigningServiceVerifyResponse.encode(response).finish());

describe("verification answers", () => {
  test("the gRPC answer carries every field; no problem is the empty string", () => {
    const response = verifyResponse(verification);
    assert.equal(response.signers[0]!.problem, "");
    assert.equal(response.signers[1]!.problem, "it was changed after signing");
    assert.deepEqual(overTheWire(response), response);
  });

  test("the JSON answer read back from the gRPC answer is the verification, problem only when there is one", () => {
    const json = verificationOf(overTheWire(verifyResponse(verification)));
    assert.deepEqual(json, verification);
    assert.equal("problem" in json.signers[0]!, false);
    // the field order /v1/verify has always answered with: the proto's, problem last
    const protoOrder = Object.keys(SignerReport.fromPartial({})).filter((key) => key !== "problem");
    assert.deepEqual(Object.keys(json.signers[0]!), protoOrder);
    assert.deepEqual(Object.keys(json.signers[1]!), [...protoOrder, "problem"]);
    assert.deepEqual(Object.keys(json), ["valid", "reason", "signers", "document"]);
  });

  test("the published schema and the proto describe the same fields", () => {
    const signer = pdfVerificationSchema.properties.signers.items;
    assert.deepEqual(Object.keys(signer.properties).sort(), Object.keys(SignerReport.fromPartial({})).sort());
    assert.deepEqual([...signer.required].sort(), Object.keys(signer.properties).filter((key) => key !== "problem").sort());
    assert.deepEqual(Object.keys(pdfVerificationSchema.properties).sort(), Object.keys(SigningServiceVerifyResponse.fromPartial({})).sort());
  });
});
