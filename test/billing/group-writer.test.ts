import { test } from "node:test";
import assert from "node:assert/strict";
import { createGroupWriter } from "../../src/billing/group-writer.ts";

function recorder(failOn?: (n: number) => boolean) {
  const statements: number[][] = [];
  const write = createGroupWriter<number>({
    maxBatch: 3,
    writeMany: async (items) => {
      await new Promise((r) => setTimeout(r, 5));
      if (failOn && items.some(failOn)) throw new Error("group refused");
      statements.push(items);
    },
    writeOne: async (item) => {
      await new Promise((r) => setTimeout(r, 1));
      if (failOn?.(item)) throw new Error(`item ${item} refused`);
      statements.push([item]);
    },
  });
  return { write, statements };
}

test("a lone write goes out alone and at once; concurrent ones share statements of at most maxBatch", async () => {
  const { write, statements } = recorder();
  await write(0);
  assert.deepEqual(statements, [[0]]);
  await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => write(n)));
  // 1 goes out first on its own; 2..7 queue behind it and go in groups of 3.
  assert.deepEqual(statements.slice(1), [[1], [2, 3, 4], [5, 6, 7]]);
});

test("a failing item fails only its own caller; the rest of its group is stored", async () => {
  const { write, statements } = recorder((n) => n === 3);
  const results = await Promise.allSettled([1, 2, 3, 4].map((n) => write(n)));
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  assert.deepEqual(statements.flat().sort(), [1, 2, 4]);
  // The writer keeps working afterwards.
  await write(9);
  assert.equal(statements.flat().includes(9), true);
});

test("a store outage fails the whole group at once: no item-by-item retry against a store that is away", async () => {
  let down = true;
  let singles = 0;
  const outage = Object.assign(new Error("Query read timeout"), { code: "08006" });
  const write = createGroupWriter<number>({
    maxBatch: 3,
    isOutage: (err) => err === outage,
    writeMany: async () => {
      await new Promise((r) => setTimeout(r, 1));
      if (down) throw outage;
    },
    writeOne: async () => {
      singles++;
      await new Promise((r) => setTimeout(r, 1));
      if (down) throw outage;
    },
  });
  const results = await Promise.allSettled([1, 2, 3, 4].map((n) => write(n)));
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected", "rejected", "rejected"]);
  // 1 went out alone (one writeOne); the group 2..4 failed as one statement.
  assert.equal(singles, 1);
  down = false;
  await write(5);
});
