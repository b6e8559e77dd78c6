/**
 * Kubernetes resource quantities ("512Mi", "1.5Gi", "1G", "1e9", 1073741824).
 * @kubernetes/client-node 1.4.0 has quantityToScalar, but only in its
 * dist/util.js, which the package does not export, and it throws on a decimal
 * with a suffix ("1.5Gi"); so this small parser, exact with bigint.
 */

/** The grammar of a quantity (as in the CRD's pattern, with integer exponents as the API server's parser takes them). */
const QUANTITY = /^([+-]?)(\d+)?(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d+))?$/;

const BINARY_POWER: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const DECIMAL_POWER: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** Powers of ten beyond this are no resource (2^63, the API server's cap, is below 10^19); refused rather than computed, so "1e999999999" cannot stall the operator. */
const MAX_POWER = 64;

/**
 * A quantity as a whole number, a fraction rounded away from zero as the API
 * server's Quantity.Value() does (bytes, for memory); undefined when it is not
 * a quantity, or an absurd one.
 */
export function quantityValue(quantity: string | number): bigint | undefined {
  const match = QUANTITY.exec(String(quantity));
  if (!match) return undefined;
  const [, sign, whole = "", fraction = "", binary, decimal, exponent] = match;
  if (whole === "" && fraction === "") return undefined;
  // value = digits × 2^binary × 10^power
  const digits = BigInt(whole + fraction);
  const scale = decimal ? DECIMAL_POWER[decimal] : exponent ? Number(exponent) : 0;
  if (Math.abs(scale) > MAX_POWER) return undefined;
  const power = scale - fraction.length;
  let numerator = digits << (binary ? BINARY_POWER[binary] : 0n);
  let denominator = 1n;
  if (power >= 0) numerator *= 10n ** BigInt(power);
  else denominator = 10n ** BigInt(-power);
  const magnitude = (numerator + denominator - 1n) / denominator;
  return sign === "-" ? -magnitude : magnitude;
}

/** A number as a quantity: whole numbers as they are, others in thousandths ("769m"). */
export function formatQuantity(value: number): string {
  return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
}
