// Group commit for small writes that many requests make at once (the request log): a
// write that arrives while another is in flight waits and goes out with the others in
// the next statement. A lone write goes out at once, so nothing waits on a timer; under
// load, N concurrent requests cost about one round trip instead of N (the load run in
// docs/RELIABILITY.md). Each caller's promise settles when its own row is stored.

export interface GroupWriterOptions<T> {
  /** Stores several items in one statement. */
  writeMany(items: T[]): Promise<void>;
  /** Stores one; used when a group fails, so one bad item cannot lose the others. */
  writeOne(item: T): Promise<void>;
  /** Most items per statement (keeps the statement's parameter count bounded). */
  maxBatch: number;
  /**
   * Failures that say nothing about the items (the store is away): the whole group is
   * refused at once instead of item by item, which against a frozen store would cost
   * one statement timeout per item while every later write waits in the queue.
   */
  isOutage?: (err: unknown) => boolean;
}

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(err: unknown): void;
}

export function createGroupWriter<T>(o: GroupWriterOptions<T>): (item: T) => Promise<void> {
  let queue: Waiting<T>[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (queue.length > 0) {
        const group = queue.slice(0, o.maxBatch);
        queue = queue.slice(group.length);
        try {
          if (group.length === 1) await o.writeOne(group[0]!.item);
          else await o.writeMany(group.map((w) => w.item));
          for (const w of group) w.resolve();
        } catch (err) {
          if (group.length === 1 || o.isOutage?.(err)) {
            for (const w of group) w.reject(err);
            continue;
          }
          // Find out which ones fail, one at a time; the rest are still stored.
          for (const w of group) await o.writeOne(w.item).then(w.resolve, w.reject);
        }
      }
    } finally {
      running = false;
    }
  }

  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running) void drain();
    });
}
