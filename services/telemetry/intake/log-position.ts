/**
 * Where a Kafka topic's partitions stood, as far as one producer knew: for
 * each partition, an offset below every record written after the position
 * was taken. A partition it does not name was not known, so anything written
 * later may be anywhere in it. Positions only ever move forward, so an older
 * one is still a valid (if less precise) lower bound.
 */
export type LogPosition = Record<number, number>;

/** The position that is a lower bound for both: per partition the lower offset, and only partitions both know. */
export function earliest(a: LogPosition, b: LogPosition): LogPosition {
  const merged: LogPosition = {};
  for (const [partition, offset] of Object.entries(a)) {
    const other = b[Number(partition)];
    if (other !== undefined) merged[Number(partition)] = Math.min(offset, other);
  }
  return merged;
}

export function samePosition(a: LogPosition, b: LogPosition): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((partition) => a[Number(partition)] === b[Number(partition)]);
}
