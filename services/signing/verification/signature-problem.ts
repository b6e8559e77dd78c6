/**
 * Why a signature is not intact, worded to follow "Signature n does not match
 * the document: " (any other error while checking one becomes "the signature
 * cannot be read (…)").
 */
export class SignatureProblem extends Error {}
