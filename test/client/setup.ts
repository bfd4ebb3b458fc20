// One real service for a client test file: a server process with the stub model and
// an embedded store of its own (so its product status can be switched to maintenance
// without touching anyone else), a customer with credit, and a counting front.
import { fixture } from "../support/harness.ts";
import { adminClient, setUpCustomer, startServer, stopAll, type Admin } from "../support/server-process.ts";
import { EMBEDDED, openStack } from "../support/stacks.ts";
import { startFront, type Front } from "./front.ts";

/** 64 × 48 PNG: the cheapest image the stub model processes. */
export const TINY_PNG = fixture("images/orient-upright.png");

export interface Service {
  url: string;
  admin: Admin;
  customer: { orgId: string; appId: string; liveKey: string; testKey: string };
  front: Front;
  close(): Promise<void>;
}

export async function startService(): Promise<Service> {
  const opened = await openStack(EMBEDDED, 0, { dataDir: true });
  try {
    const server = await startServer(opened.env);
    const admin = adminClient(server.url);
    const customer = await setUpCustomer(admin, { creditKrw: 10_000 });
    const front = await startFront(server.url);
    return {
      url: server.url,
      admin,
      customer,
      front,
      async close() {
        await front.close();
        await stopAll();
        await opened.close();
      },
    };
  } catch (err) {
    await stopAll();
    await opened.close();
    throw err;
  }
}

/** A sleep that records each wait instead of waiting; `onWait` can move a test clock. */
export function recordingSleep(onWait: (ms: number) => void = () => {}) {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms: number) => {
      waits.push(ms);
      onWait(ms);
    },
  };
}

export const REQUEST_ID = /^req_[0-9a-z]{26}$/;
