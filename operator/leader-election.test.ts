import assert from "node:assert/strict";
import { test } from "node:test";
import { LeaderElection, type LeaseRecord, type LeaseStore } from "./leader-election.js";

/** A lease with the API server's optimistic concurrency: a write must carry the current resourceVersion. */
class MemoryLeaseStore implements LeaseStore {
  record: LeaseRecord | undefined;
  private version = 0;
  async read() {
    return this.record && { ...this.record };
  }
  async create(record: LeaseRecord) {
    if (this.record) return false;
    this.record = { ...record, resourceVersion: String(++this.version) };
    return true;
  }
  async replace(record: LeaseRecord) {
    if (!this.record || record.resourceVersion !== this.record.resourceVersion) return false;
    this.record = { ...record, resourceVersion: String(++this.version) };
    return true;
  }
}

function candidate(store: LeaseStore, identity: string, clock: { now: number }) {
  const events: string[] = [];
  const election = new LeaderElection(store, {
    identity,
    leaseDurationSeconds: 15,
    retryPeriodMs: 2000,
    now: () => clock.now,
    onStartedLeading: () => events.push("start"),
    onStoppedLeading: () => events.push("stop"),
  });
  return { election, events };
}

test("one of two candidates leads; the other takes over only after the lease expires", async () => {
  const store = new MemoryLeaseStore();
  const clock = { now: 1_000_000 };
  const a = candidate(store, "a", clock);
  const b = candidate(store, "b", clock);
  assert.equal(await a.election.tryAcquireOrRenew(), true);
  assert.equal(await b.election.tryAcquireOrRenew(), false);
  clock.now += 10_000;
  assert.equal(await a.election.tryAcquireOrRenew(), true, "renewed");
  clock.now += 14_000;
  assert.equal(await b.election.tryAcquireOrRenew(), false, "a renewed 14 s ago: still a's");
  clock.now += 2_000; // a stopped renewing 16 s ago
  assert.equal(await b.election.tryAcquireOrRenew(), true);
  assert.equal(store.record!.transitions, 1);
  assert.equal(await a.election.tryAcquireOrRenew(), false, "a sees b's live lease and steps down");
  assert.deepEqual(a.events, ["start", "stop"]);
  assert.deepEqual(b.events, ["start"]);
});

test("a leader that stops gives the lease up at once", async () => {
  const store = new MemoryLeaseStore();
  const clock = { now: 1_000_000 };
  const a = candidate(store, "a", clock);
  const b = candidate(store, "b", clock);
  await a.election.tryAcquireOrRenew();
  await a.election.stop();
  assert.equal(a.election.isLeader, false);
  assert.equal(await b.election.tryAcquireOrRenew(), true);
});

test("two candidates racing for a free lease: exactly one wins", async () => {
  const store = new MemoryLeaseStore();
  const clock = { now: 1_000_000 };
  const candidates = ["a", "b", "c"].map((id) => candidate(store, id, clock));
  const results = await Promise.all(candidates.map((c) => c.election.tryAcquireOrRenew()));
  assert.equal(results.filter(Boolean).length, 1);
});

test("a leader whose renewals fail keeps leading until the lease would have expired, then steps down", async () => {
  const store = new MemoryLeaseStore();
  const clock = { now: 1_000_000 };
  const a = candidate(store, "a", clock);
  await a.election.tryAcquireOrRenew();
  store.replace = async () => {
    throw new Error("API server unreachable");
  };
  clock.now += 5_000;
  await assert.rejects(a.election.tryAcquireOrRenew());
  assert.equal(a.election.isLeader, true);
  clock.now += 11_000; // 16 s since the last renewal
  await assert.rejects(a.election.tryAcquireOrRenew());
  assert.equal(a.election.isLeader, false);
  assert.deepEqual(a.events, ["start", "stop"]);
});
